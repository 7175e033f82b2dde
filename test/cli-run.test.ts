import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt } from './support/build.js';
import { runCli } from './support/cli.js';

/**
 * `fs-sandbox run -- CMD ARGS…` through the real CLI and bwrap, checked on the host afterwards: the
 * command is sandboxed by default (workspace-write on --cwd, the minimal reads, no network), its
 * output and exit code come through, and the runner's own exits (124 timeout, 125 refused, 126 not
 * executable, 127 not found, 128+N signal) are distinct from the command's.
 */

let base: string;
let ws: string;
let other: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-run-');
  ws = join(base, 'ws');
  other = join(base, 'other');
  for (const dir of [ws, other]) await mkdir(dir);
  await writeFile(join(other, 'secret.txt'), 'secret\n');
  await writeFile(join(ws, 'denied.txt'), 'denied\n');
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const env = { PATH: '/usr/bin:/bin', FS_SANDBOX_TEST_TOKEN: 'hunter2', KEEP_OUT: 'hunter3' };
const run = (args: string[], input?: string) =>
  runCli(['run', '--cwd', ws, ...args], { user: 'root', env, input, timeoutMs: 30_000 });

describe('fs-sandbox run (real CLI, real bwrap)', () => {
  it("streams the command's stdout and stderr and passes its exit code on; writes land in the cwd", async () => {
    const done = await run(['--', '/bin/sh', '-c', 'echo out; echo err >&2; echo made > made.txt; exit 7']);
    expect([done.stdout, done.stderr, done.code]).toEqual(['out\n', 'err\n', 7]);
    expect(readFileSync(join(ws, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it("gives the command this process's stdin, and looks the program up on its PATH", async () => {
    const done = await run(['--', 'tr', 'a-z', 'A-Z'], 'hello\n');
    expect([done.stdout, done.code]).toEqual(['HELLO\n', 0]);
    // Without --, the command's own options are still its own.
    const options = await run(['--env', 'X=1', 'wc', '-c'], 'four');
    expect([options.stdout.trim(), options.code]).toEqual(['4', 0]);
  });

  it('security: writes outside the cwd fail, reads outside the minimal roots and of --deny fail, no network', async () => {
    const write = await run(['--', '/bin/sh', '-c', `echo pwned > ${other}/x.txt`]);
    expect(write.code).not.toBe(0);
    const viaProc = await run(['--', '/bin/sh', '-c', `echo pwned > /proc/self/root${other}/y.txt`]);
    expect(viaProc.code).not.toBe(0);
    expect((await readdir(other)).sort()).toEqual(['secret.txt']);
    const read = await run(['--', '/bin/cat', join(other, 'secret.txt')]);
    expect([read.code === 0, read.stdout]).toEqual([false, '']);
    const denied = await run(['--deny', 'denied.txt', '--', '/bin/cat', 'denied.txt']);
    expect([denied.code === 0, denied.stdout]).toEqual([false, '']);
    const net = await run(['--', '/bin/sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
    expect(net.stdout.trim()).toBe('lo');
  });

  it("keeps the caller's credentials out: only --env and the allowlist minus *TOKEN*-like names", async () => {
    const done = await run(['--env', 'GIVEN=yes', '--', '/usr/bin/env']);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('GIVEN=yes');
    expect(done.stdout).not.toContain('hunter2');
    expect(done.stdout).not.toContain('hunter3');
  });

  it('refuses a program the sandbox does not show (127), one that is not executable (126), a bad --env (125)', async () => {
    const missing = await run(['--', 'no-such-program-here']);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toMatch(/no-such-program-here: no such program .*\[not_found\]/);
    // It exists on the host, but the default sandbox does not show it.
    await writeFile(join(other, 'tool'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
    const hidden = await run(['--', join(other, 'tool')]);
    expect([hidden.code, hidden.stdout]).toEqual([127, '']);
    const notExecutable = await run(['--', '/etc/passwd']);
    expect(notExecutable.code).toBe(126);
    expect((await run(['--env', 'NOEQUALS', '--', '/bin/true'])).code).toBe(125);
  });

  it('kills the command past --timeout (124) and leaves nothing running', async () => {
    const marker = `7.${process.pid}1`;
    const done = await run(['--timeout', '300', '--', '/bin/sleep', marker]);
    expect(done.code).toBe(124);
    expect(done.stderr).toContain('--timeout 300 ms');
    expect(runningWith(marker)).toEqual([]);
  });

  it('forwards SIGTERM and SIGINT as a kill of the sandboxed tree, and exits 128 + the signal', async () => {
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const marker = `8.${process.pid}${code}`;
      const child = spawn(process.execPath, [CLI_BIN, 'run', '--cwd', ws, '--', '/bin/sleep', marker], {
        env,
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      for (let i = 0; i < 200 && runningWith(marker).length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(runningWith(marker).length).toBeGreaterThan(0);
      child.kill(signal);
      expect(await exited).toBe(code);
      expect(runningWith(marker)).toEqual([]);
    }
  });

  it('runs unsandboxed only with --no-sandbox', async () => {
    const done = await runCli(['run', '--no-sandbox', '--', '/bin/sh', '-c', `echo ok > ${other}/free.txt`], {
      user: 'root',
      env,
      timeoutMs: 30_000,
    });
    expect(done.code).toBe(0);
    expect(existsSync(join(other, 'free.txt'))).toBe(true);
  });
});

/** Pids of the sandboxed `sleep MARKER` itself (not the CLI or bwrap, whose argv also hold it). */
function runningWith(marker: string): string[] {
  const pids: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `/bin/sleep\0${marker}\0`) pids.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}
