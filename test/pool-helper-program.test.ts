import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO } from './support/build.js';

/**
 * The helper program's side of the warm pool and of fast starts, run as `node dist/helper.cjs`:
 * the mount check and the warm-up flag on its command line, and the V8 code cache it ships with.
 */

const BUNDLE = join(REPO, 'packages/helper/dist/helper.cjs');
let dir: string;
let file: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'fs-sandbox-pool-program-'));
  file = join(dir, 'a.txt');
  writeFileSync(file, 'hello');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function runProgram(args: string[], request: unknown) {
  const result = spawnSync(process.execPath, [BUNDLE, ...args], {
    input: `${JSON.stringify(request)}\n`,
    env: { PATH: '/usr/bin:/bin' },
    encoding: 'latin1',
  });
  const newline = result.stdout.indexOf('\n');
  return {
    status: result.status,
    stderr: result.stderr,
    line: newline === -1 ? null : JSON.parse(result.stdout.slice(0, newline)),
    rest: result.stdout.slice(newline + 1),
  };
}

describe('helper program arguments', () => {
  // Built when a test runs: `file` exists only after beforeAll.
  const read = () => ({ operation: 'fs/readFile', params: { path: file } });

  it('answers normally after a warm-up rehearsal, with nothing else on stdout', () => {
    const run = runProgram(['--expect-mounts', '/', '--warm-up'], read());
    expect(run.status).toBe(0);
    expect(run.line).toMatchObject({ status: 'ok', binary: { field: 'dataBase64', length: 5 } });
    expect(run.rest).toBe('hello');
    expect(run.stderr).toBe('');
  });

  it('refuses as stale, touching nothing, when an expected mount point is not mounted', () => {
    const target = join(dir, 'never-written.txt');
    const run = runProgram(['--expect-mounts', '/', dir], {
      operation: 'fs/writeFile',
      params: { path: target, dataBase64: '', mode: 'overwrite' },
    });
    expect(run.status).toBe(0);
    expect(run.line).toEqual({
      status: 'error',
      payload: {
        code: -32603,
        message: `sandbox view is stale: ${dir} changed since the helper started`,
        data: { errorKind: 'helper_failed', stale: true },
      },
    });
    expect(() => readFileSync(target)).toThrow();
  });

  it('fails the protocol (exit 1, one line on stderr) on an unknown argument', () => {
    const run = runProgram(['--bogus'], read());
    expect(run.status).toBe(1);
    expect(run.line).toBeNull();
    expect(run.stderr).toMatch(/^fs-sandbox helper: protocol failure: usage: helper .*\n$/);
  });
});

describe('helper code cache', () => {
  it('ships a V8 code cache this node accepts for the program it carries', () => {
    const file = readFileSync(BUNDLE);
    const loader = file.toString('latin1', 0, 2000);
    const ranges = (name: string): Array<[number, number]> => {
      const match = new RegExp(`const ${name} = bytes\\((\\[.*?\\]\\])\\)`).exec(loader);
      expect(match, name).not.toBeNull();
      return JSON.parse((match as RegExpExecArray)[1] as string);
    };
    const bytes = (name: string) =>
      Buffer.concat(ranges(name).map(([start, end]) => new Uint8Array(file.subarray(start, end))));
    const script = new Script(bytes('source').toString('utf8'), {
      filename: BUNDLE,
      cachedData: bytes('cachedData'),
    });
    expect(script.cachedDataRejected).toBe(false);
  });
});
