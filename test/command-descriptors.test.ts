import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, REPO } from './support/build.js';
import { cliEnv, createFixture, type Fixture, removeFixture, workspaceContext } from './support/fixture.js';

/**
 * A descriptor survives exec, bwrap and every namespace: one that the broker's parent left open on
 * a directory outside every root would let a sandboxed command read and write there as
 * /proc/self/fd/N. The CLI closes what it inherits when it starts; the library spawns every command
 * with /dev/null at each such number, so nothing needs closing first. Real bwrap, the host checked
 * afterwards.
 */

let fixture: Fixture;

beforeAll(async () => {
  ensureBuilt();
  fixture = await createFixture('root');
});

afterAll(async () => {
  if (fixture) await removeFixture(fixture);
});

/**
 * Runs `file args` with `fd` open on `path` as a shell's `exec N<dir` leaves it: not close-on-exec
 * (a descriptor Node passes to a child is close-on-exec again in a Node child, so a shell opens it).
 */
function runWithDescriptor(file: string, args: string[], fd: number, path: string) {
  const script = `exec ${fd}<"$1"; shift; exec "$@"`;
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', script, 'bash', path, file, ...args], {
      cwd: fixture.ws,
      env: cliEnv(fixture),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('descriptors a command could inherit', () => {
  for (const fd of [30, 240]) {
    it(`fs-sandbox run: fd ${fd} open on a directory outside reaches nothing`, async () => {
      const before = readdirSync(fixture.outside).sort();
      const run = await runWithDescriptor(
        process.execPath,
        [
          CLI_BIN,
          'run',
          '--',
          'sh',
          '-c',
          `cat /proc/self/fd/${fd}/secret.txt; echo planted > /proc/self/fd/${fd}/planted.txt`,
        ],
        fd,
        fixture.outside,
      );
      expect(run.stdout).not.toContain(fixture.secretText.trim());
      expect(existsSync(join(fixture.outside, 'planted.txt'))).toBe(false);
      expect(readdirSync(fixture.outside).sort()).toEqual(before);
    });
  }

  it('broker.run: fd 200 open on a directory outside reaches nothing, and the command still runs', async () => {
    const before = readdirSync(fixture.outside).sort();
    const script = `
      import { createBroker } from ${JSON.stringify(pathToFileURL(join(REPO, 'packages/broker/dist/index.js')).href)};
      const broker = createBroker({ pool: false });
      try {
        const result = await broker.run(
          ['sh', '-c', 'cat /proc/self/fd/200/secret.txt; echo planted > /proc/self/fd/200/planted.txt; ls -l /proc/self/fd/ | grep -c " 200 -> "; echo ran'],
          { cwd: ${JSON.stringify(pathToFileURL(fixture.ws).href)}, sandbox: ${JSON.stringify(workspaceContext(fixture))} },
        );
        console.log(JSON.stringify(result));
      } catch (error) {
        console.log(JSON.stringify({ kind: error.kind, message: error.message }));
      } finally {
        await broker.close();
      }`;
    const run = await runWithDescriptor(
      process.execPath,
      ['--input-type=module', '-e', script],
      200,
      fixture.outside,
    );
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout.trim());
    // Not refused: the descriptor reaches the command as /dev/null, which has no entries.
    expect(result.stdout).toMatch(/ran\n$/);
    expect(result.stdout).not.toContain(fixture.secretText.trim());
    expect(result.sandboxed).toBe(true);
    expect(existsSync(join(fixture.outside, 'planted.txt'))).toBe(false);
    expect(readdirSync(fixture.outside).sort()).toEqual(before);
  });
});
