import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBroker } from '@fs-sandbox/broker/internal';
import { helperBundlePath } from '@fs-sandbox/helper/bundle-path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt } from './support/build.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';

/**
 * A broker trusts the Bun helper and (under `auto`) bwrap without probing them first: the first
 * read runs under both, and its answer proves them (core/deferred-probes.ts). These are the
 * machines where that first read fails: each must still answer, under what the probe would have
 * chosen (node, Landlock), and what is refused when asked for stays refused, typed.
 */

let fixture: Fixture;
let scratch: string;

beforeAll(async () => {
  ensureBuilt();
  fixture = await createFixture('root');
  scratch = mkdtempSync('/tmp/fs-sandbox-probes-');
});
afterAll(async () => {
  await removeFixture(fixture);
  rmSync(scratch, { recursive: true, force: true });
});

/** The CLI in a mount namespace of its own where the Bun helper's file is one that cannot execute. */
function cliWithUnusableBun(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const notAProgram = join(scratch, 'not-a-program');
  writeFileSync(notAProgram, 'not a program\n');
  chmodSync(notAProgram, 0o644);
  const bunHelper = realpathSync(helperBundlePath({}, 'bun'));
  return new Promise((resolve) => {
    execFile(
      'unshare',
      [
        '--user',
        '--map-root-user',
        '--mount',
        'sh',
        '-c',
        'mount --bind "$1" "$2" && shift 2 && exec "$@"',
        'sh',
        notAProgram,
        bunHelper,
        process.execPath,
        CLI_BIN,
        ...args,
      ],
      { cwd: fixture.ws, env: cliEnv(fixture), timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A pool-less broker whose bwrap is a fake one that cannot make its namespaces (fakeBwrap). */
function brokerWithFakeBwrap(name: string) {
  const bwrap = fakeBwrap(name);
  return {
    bwrap,
    broker: createBroker({ env: { PATH: '/usr/bin:/bin', FS_SANDBOX_BWRAP: bwrap.path }, pool: false }),
  };
}

/** A bwrap that cannot make namespaces, as bwrap says it: each run logs its first argument. */
function fakeBwrap(name: string): { path: string; runs: () => string[] } {
  const path = join(scratch, name);
  const log = `${path}.log`;
  writeFileSync(
    path,
    `#!/bin/sh\necho "$1" >> '${log}'\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n`,
  );
  chmodSync(path, 0o755);
  return {
    path,
    runs: () => {
      try {
        return readFileSync(log, 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    },
  };
}

describe('deferred probes', () => {
  it('a read under a Bun helper that cannot execute answers under node; bun asked for is refused', async () => {
    const read = await cliWithUnusableBun(['cat', 'hello.txt']);
    expect([read.stdout, read.code], read.stderr).toEqual(['hello sandbox\n', 0]);
    const asked = await cliWithUnusableBun(['cat', '--helper-runtime', 'bun', 'hello.txt']);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toBe('');
    expect(asked.stderr).toMatch(
      /the Bun helper runtime was asked for but .* failed its self-check .*\[sandbox_unavailable\]\n$/,
    );
    // doctor still runs the self-check first, and warns.
    const doctor = await cliWithUnusableBun(['doctor']);
    expect(doctor.stdout).toMatch(/^helper runtime +WARN +node /m);
  });

  it('a read under a bwrap that cannot make its namespaces answers under Landlock, and bwrap is not tried again', async () => {
    const { bwrap, broker } = brokerWithFakeBwrap('bwrap-without-namespaces');
    try {
      const path = uri(join(fixture.ws, 'hello.txt'));
      const sandbox = workspaceContext(fixture);
      const first = await broker.callWithInfo('fs/readFile', { path, sandbox });
      expect(first.info.backend).toBe('landlock');
      expect(Buffer.from(first.result.dataBase64 as unknown as Buffer).toString()).toBe('hello sandbox\n');
      // The launch that failed, then the probe (its version, then a sandbox of its own).
      expect(bwrap.runs()).toEqual(['--new-session', '--version', '--new-session']);
      const second = await broker.callWithInfo('fs/getMetadata', { path, sandbox });
      expect(second.info.backend).toBe('landlock');
      expect(bwrap.runs()).toHaveLength(3);
    } finally {
      await broker.close();
    }
  });

  it('a write runs the probes first: no launch under an unproven bwrap', async () => {
    const { bwrap, broker } = brokerWithFakeBwrap('bwrap-without-namespaces-2');
    try {
      const path = uri(join(fixture.ws, 'written.txt'));
      const write = await broker.callWithInfo('fs/writeFile', {
        path,
        dataBase64: Buffer.from('written\n').toString('base64'),
        sandbox: workspaceContext(fixture),
      });
      expect(write.info.backend).toBe('landlock');
      expect(bwrap.runs()).toEqual(['--version', '--new-session']);
      expect(readFileSync(join(fixture.ws, 'written.txt'), 'utf8')).toBe('written\n');
    } finally {
      await broker.close();
    }
  });
});
