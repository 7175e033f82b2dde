import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processExitedNotificationSchema, processOutputNotificationSchema } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { sandboxContext, uri } from './support/pool.js';
import { processFinished } from './support/process-output.js';
import { waitFor } from './support/processes.js';

let dir: string;
let work: string;
let outside: string;
let secret: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-process-e2e-'));
  work = join(dir, 'work');
  outside = join(dir, 'outside');
  await mkdir(work);
  await mkdir(outside);
  secret = join(work, 'secret.txt');
  await writeFile(secret, 'top secret\n');
  await symlink(secret, join(work, 'link-to-secret'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const minimalRead = ['/usr', '/bin', '/lib', '/lib64', '/etc'];
const context = (extra: { network?: 'enabled' } = {}) => {
  const base = sandboxContext({ read: minimalRead, write: [work], deny: [secret] }) as {
    permissions: Record<string, unknown>;
  };
  if (extra.network) base.permissions.network = extra.network;
  return base;
};

/** The notifications of one process until its `process/closed`. */
const until = processFinished;

async function session(): Promise<ServeProcess> {
  const serve = ServeProcess.start();
  await serve.handshake();
  return serve;
}

function start(serve: ServeProcess, processId: string, argv: string[], extra: Record<string, unknown> = {}) {
  return serve.request('process/start', {
    processId,
    argv,
    cwd: uri(work),
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    sandbox: context(),
    ...extra,
  });
}

describe('process/* under bwrap (real server)', () => {
  it('runs a command in the sandbox: output deltas, exit code, closed, in the reference shapes', async () => {
    const serve = await session();
    const reply = await start(serve, 'p1', ['/bin/sh', '-c', 'echo hi; echo err >&2; exit 3']);
    expect(reply.result).toEqual({ processId: 'p1', sandboxType: 'linuxSeccomp' });
    const done = await until(serve, 'p1');
    expect([done.stdout, done.stderr, done.exitCode]).toEqual(['hi\n', 'err\n', 3]);
    for (const n of done.notifications) {
      if (n.method === 'process/output') processOutputNotificationSchema().parse(n.params);
      if (n.method === 'process/exited') processExitedNotificationSchema().parse(n.params);
    }
    expect(done.notifications.map((n) => n.params.seq)).toEqual([1, 2, 3, 4]);
    const read = await serve.request('process/read', { processId: 'p1' });
    expect(read.result).toMatchObject({ exited: true, exitCode: 3, closed: true, nextSeq: 5 });
    // A live id cannot be reused; an exited one can.
    const from = serve.rawLines.length;
    const again = await start(serve, 'p1', ['/bin/true']);
    expect(again.result).toMatchObject({ processId: 'p1' });
    expect((await until(serve, 'p1', from)).exitCode).toBe(0);
    await serve.stop();
  });

  it('refuses a live id, writes stdin, terminates, and answers unknown ids like the reference', async () => {
    const serve = await session();
    await start(serve, 'cat', ['/bin/cat'], { pipeStdin: true });
    const dup = await start(serve, 'cat', ['/bin/true']);
    expect(dup.error?.message).toBe('process cat already exists');
    const write = await serve.request('process/write', {
      processId: 'cat',
      chunk: 'aGVsbG8K',
      writeId: 'w1',
    });
    expect(write.result).toEqual({ status: 'accepted' });
    expect(
      (await serve.request('process/write', { processId: 'nope', chunk: 'aA==', writeId: 'w' })).result,
    ).toEqual({
      status: 'unknownProcess',
    });
    for (let i = 0; i < 100 && !serve.rawLines.some((l) => l.includes('"process/output"')); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await serve.request('process/terminate', { processId: 'cat' })).result).toEqual({
      running: true,
    });
    const done = await until(serve, 'cat');
    expect([done.stdout, done.exitCode]).toEqual(['hello\n', 137]);
    expect((await serve.request('process/terminate', { processId: 'cat' })).result).toEqual({
      running: false,
    });
    expect((await serve.request('process/read', { processId: 'nope' })).error?.message).toBe(
      'unknown process id nope',
    );
    const noStdin = await start(serve, 'c2', ['/bin/cat']);
    expect(noStdin.result).toBeDefined();
    await until(serve, 'c2');
    expect(
      (await serve.request('process/write', { processId: 'c2', chunk: 'aA==', writeId: 'w' })).result,
    ).toEqual({
      status: 'stdinClosed',
    });
    expect((await start(serve, 'e', [])).error?.message).toBe('argv must not be empty');
    const sizeWithoutTty = await start(serve, 't', ['/bin/true'], { size: { rows: 2, cols: 2 } });
    expect(sizeWithoutTty.error?.message).toBe('process/start size requires tty: true');
    expect(sizeWithoutTty.error?.data.errorKind).toBe('invalid_params');
    await serve.stop();
  });

  it('tty: true runs the command on a terminal of its own inside the sandbox, of the given size', async () => {
    const serve = ServeProcess.start();
    const init = await serve.handshake();
    expect(init.result?.environmentInfo).toMatchObject({ capabilities: { processTty: true } });
    const script = [
      '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo on-a-terminal',
      'stty size',
      // Only its own devpts: no terminal outside to push keystrokes into (TIOCSTI).
      'echo pts: $(ls /dev/pts)',
      'read line',
      'echo "got:$line"',
      `echo pwned > ${outside}/tty.txt; echo "write outside: $?"`,
      `cat ${secret}; echo "read denied: $?"`,
      'exit 5',
    ].join('; ');
    const reply = await start(serve, 'tty', ['/bin/sh', '-c', script], {
      tty: true,
      size: { rows: 7, cols: 33 },
    });
    expect(reply.result).toEqual({ processId: 'tty', sandboxType: 'linuxSeccomp' });
    await waitFor(
      async () => (serve.rawLines.some((line) => line.includes('"process/output"')) ? true : undefined),
      20_000,
      'the terminal to show output',
    );
    // No pipeStdin: a terminal's input is always open, as the reference's.
    const write = await serve.request('process/write', {
      processId: 'tty',
      chunk: Buffer.from('hello\n').toString('base64'),
      writeId: 'w',
    });
    expect(write.result).toEqual({ status: 'accepted' });
    const done = await until(serve, 'tty');
    expect(done.exitCode).toBe(5);
    expect([done.stdout, done.stderr]).toEqual(['', '']);
    // The terminal's own line endings (onlcr), and its echo of what was typed.
    const lines = done.pty.split('\r\n');
    expect(lines).toContain('on-a-terminal');
    expect(lines).toContain('7 33');
    expect(lines).toContain('pts: 0 ptmx');
    expect(lines).toContain('hello');
    expect(lines).toContain('got:hello');
    expect(lines.find((line) => line.startsWith('write outside:'))).not.toBe('write outside: 0');
    expect(lines.find((line) => line.startsWith('read denied:'))).not.toBe('read denied: 0');
    expect(done.pty).not.toContain('top secret');
    expect(await readdir(outside)).toEqual([]);
    // Without a size: the reference's 24 rows of 80 columns; closeStdin types the end of file.
    const from = serve.rawLines.length;
    await start(serve, 'tty2', ['/bin/sh', '-c', 'stty size; cat; echo cat-ended'], { tty: true });
    const ended = await serve.request('process/write', {
      processId: 'tty2',
      chunk: Buffer.from('abc\n').toString('base64'),
      writeId: 'w',
      closeStdin: true,
    });
    expect(ended.result).toEqual({ status: 'accepted' });
    const second = await until(serve, 'tty2', from);
    expect(second.exitCode).toBe(0);
    // The echo of the typed line may come before or after `stty size`'s line.
    expect(second.pty.split('\r\n').filter((line) => line !== 'abc')).toEqual(['24 80', 'cat-ended', '']);
    expect(second.pty.split('\r\n').filter((line) => line === 'abc')).toHaveLength(2);
    await serve.stop();
  });

  it('kills a command past timeoutMs and reports it; cuts output at outputBytesCap', async () => {
    const serve = await session();
    await start(serve, 'slow', ['/bin/sleep', '30'], { timeoutMs: 300 });
    const slow = await until(serve, 'slow');
    expect(slow.exitCode).toBe(137);
    expect(slow.notifications.find((n) => n.method === 'process/exited')?.params.timedOut).toBe(true);
    await start(serve, 'loud', ['/bin/sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" a'], {
      outputBytesCap: 1000,
    });
    const loud = await until(serve, 'loud');
    expect(loud.stdout.length).toBe(1000);
    expect(loud.notifications.some((n) => n.params.capReached === true)).toBe(true);
    await serve.stop();
  });

  it('kills every process of a connection when it closes', async () => {
    const serve = await session();
    const marker = `61.${process.pid}`;
    await start(serve, 'long', ['/bin/sleep', marker]);
    const running = async () =>
      (await readdir('/proc')).filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });
    await waitFor(
      async () => ((await running()).length > 0 ? true : undefined),
      10_000,
      'the command to run',
    );
    serve.child.stdin.end();
    await serve.exited;
    await waitFor(
      async () => ((await running()).length === 0 ? true : undefined),
      10_000,
      'the command to be killed',
    );
  });

  it('security: writes outside the writable roots fail, denied reads fail (also via a symlink and /proc/self/root), no network', async () => {
    const serve = await session();
    await start(serve, 'w-in', ['/bin/sh', '-c', `echo ok > ${work}/made.txt`]);
    expect((await until(serve, 'w-in')).exitCode).toBe(0);
    expect(existsSync(join(work, 'made.txt'))).toBe(true);
    await start(serve, 'w-out', ['/bin/sh', '-c', `echo pwned > ${outside}/x.txt`]);
    expect((await until(serve, 'w-out')).exitCode).not.toBe(0);
    await start(serve, 'w-proc', ['/bin/sh', '-c', `echo pwned > /proc/self/root${outside}/y.txt`]);
    expect((await until(serve, 'w-proc')).exitCode).not.toBe(0);
    expect(await readdir(outside)).toEqual([]);
    for (const [id, path] of [
      ['r', secret],
      ['r-link', join(work, 'link-to-secret')],
      ['r-proc', `/proc/self/root${secret}`],
    ] as const) {
      await start(serve, id, ['/bin/cat', path]);
      const done = await until(serve, id);
      expect(done.exitCode).not.toBe(0);
      expect(done.stdout).not.toContain('top secret');
    }
    // The command's own network namespace: only a loopback device.
    await start(serve, 'net', ['/bin/sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
    expect((await until(serve, 'net')).stdout.trim()).toBe('lo');
    await serve.stop();
  });

  it("keeps the broker's environment out of the command: only env and the allowlist through envPolicy", async () => {
    const serve = ServeProcess.start([], {
      env: { ...process.env, FS_SANDBOX_TEST_SECRET: 'hunter2' } as Record<string, string>,
    });
    await serve.handshake();
    await start(serve, 'env', ['/usr/bin/env'], {
      env: { FOO: 'bar' },
      envPolicy: {
        inherit: 'all',
        ignoreDefaultExcludes: false,
        exclude: [],
        set: { SET_ME: '1' },
        includeOnly: [],
      },
    });
    const done = await until(serve, 'env');
    expect(done.stdout).toContain('FOO=bar');
    expect(done.stdout).toContain('SET_ME=1');
    expect(done.stdout).not.toContain('hunter2');
    await serve.stop();
  });

  it('answers environment/info (with shell) and environment/status', async () => {
    const serve = ServeProcess.start();
    const init = await serve.request('initialize', { clientName: 'codex-environment' }, 'init');
    serve.notify('initialized');
    const info = (init.result as { environmentInfo: { shell: { name: string; path: string } } })
      .environmentInfo;
    expect(info.shell.path.startsWith('/')).toBe(true);
    expect((await serve.request('environment/info', {})).result).toMatchObject({ shell: info.shell });
    expect((await serve.request('environment/status', {})).result).toEqual({ status: 'ready' });
    await serve.stop();
  });
});
