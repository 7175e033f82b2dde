import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelperRequest } from '@fs-sandbox/helper';
import { FsError, LIMITS } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LaunchSpec } from '../src/backends/backend.js';
import { runHelper } from '../src/runner/spawn-helper.js';
import { directLaunch } from './support/launches.js';
import { isAlive } from './support/processes.js';

/**
 * The runner against fake helper programs: small node scripts that misbehave in one precise way
 * each, run through the same spawn path as the real helper.
 */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-runner-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let counter = 0;
async function fakeHelper(source: string, backend: LaunchSpec['backend'] = 'bwrap'): Promise<LaunchSpec> {
  counter += 1;
  const script = join(dir, `fake-${counter}.cjs`);
  await writeFile(script, source);
  return nodeLaunch(script, backend);
}

/** A launch whose "sandbox" is env(1) starting node on `script` (env execs it: the same process). */
function nodeLaunch(script: string, backend: LaunchSpec['backend'] = 'bwrap'): LaunchSpec {
  return directLaunch({ sandboxProgram: '/usr/bin/env', runtime: process.execPath, helper: script, backend });
}

const request: HelperRequest = { operation: 'fs/getMetadata', params: { path: 'file:///x' } };
const OK_LINE = JSON.stringify({
  status: 'ok',
  payload: { operation: 'fs/getMetadata', response: { isFile: true } },
});

async function failureOf(promise: Promise<unknown>): Promise<FsError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return error as FsError;
  }
  throw new Error('expected the run to fail');
}

async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    try {
      const text = await readFile(path, 'utf8');
      if (text.trim() !== '') return text.trim();
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${path} never appeared`);
}

describe('runHelper replies', () => {
  it('returns a well-formed reply', async () => {
    const launch = await fakeHelper(`process.stdout.write(${JSON.stringify(`${OK_LINE}\n`)});`);
    expect(await runHelper(launch, request, {})).toEqual({
      status: 'ok',
      payload: { operation: 'fs/getMetadata', response: { isFile: true } },
    });
  });

  it('returns an error reply as a value (a per-operation failure is not a runner failure)', async () => {
    const line = JSON.stringify({
      status: 'error',
      payload: {
        code: -32004,
        message: 'No such file or directory (os error 2)',
        data: { errorKind: 'not_found' },
      },
    });
    const launch = await fakeHelper(`process.stdout.write(${JSON.stringify(`${line}\n`)});`);
    const reply = await runHelper(launch, request, {});
    expect(reply).toEqual({
      status: 'error',
      payload: {
        code: -32004,
        message: 'No such file or directory (os error 2)',
        data: { errorKind: 'not_found' },
      },
    });
  });

  it('parses the binary trailer into a Buffer of exactly the announced bytes', async () => {
    const launch = await fakeHelper(`
      const bytes = Buffer.alloc(300000, 7); bytes[0] = 10; bytes[299999] = 10;
      const line = JSON.stringify({ status: 'ok', payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
        binary: { field: 'dataBase64', length: bytes.length } });
      process.stdout.write(line + '\\n'); process.stdout.write(bytes);`);
    const reply = await runHelper(launch, request, {});
    expect(reply.status).toBe('ok');
    if (reply.status !== 'ok') return;
    expect(reply.binary?.field).toBe('dataBase64');
    expect(reply.binary?.data.length).toBe(300000);
    expect(reply.binary?.data[0]).toBe(10);
    expect(reply.binary?.data[1]).toBe(7);
    expect(reply.binary?.data[299999]).toBe(10);
  });

  it('sends one JSON line then the raw bytes of a write (binary framing)', async () => {
    const launch = await fakeHelper(`
      const chunks = []; process.stdin.on('data', (c) => chunks.push(c)); process.stdin.on('end', () => {
        const all = Buffer.concat(chunks); const nl = all.indexOf(10);
        const head = JSON.parse(all.subarray(0, nl).toString());
        const rest = all.subarray(nl + 1);
        process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/writeFile',
          response: { head, rest: rest.toString('hex') } } }) + '\\n');
      });`);
    const data = new Uint8Array([0, 10, 255, 10]);
    const reply = await runHelper(
      launch,
      {
        operation: 'fs/writeFile',
        params: { path: '/x', dataBase64: data, mode: 'overwrite' },
      },
      {},
    );
    expect(reply.status === 'ok' && reply.payload.response).toEqual({
      head: {
        operation: 'fs/writeFile',
        params: { path: '/x', dataBase64: '', mode: 'overwrite' },
        binary: { field: 'dataBase64', length: 4 },
      },
      rest: '000aff0a',
    });
  });
});

describe('runHelper failures', () => {
  it('maps a crash to helper_failed with the signal and the stderr excerpt', async () => {
    const launch = await fakeHelper(
      `process.stderr.write('about to crash\\n'); process.kill(process.pid, 'SIGSEGV');`,
    );
    const error = await failureOf(runHelper(launch, request, {}));
    expect(error.kind).toBe('helper_failed');
    expect(error.message).toBe('helper was killed by SIGSEGV: about to crash');
  });

  it('maps a non-zero exit to helper_failed even when a reply was written', async () => {
    const launch = await fakeHelper(
      `process.stdout.write(${JSON.stringify(`${OK_LINE}\n`)}); process.stderr.write('fs-sandbox helper: protocol failure: boom\\n'); process.exitCode = 3;`,
    );
    const error = await failureOf(runHelper(launch, request, {}));
    expect(error.kind).toBe('helper_failed');
    expect(error.message).toBe('helper exited with status 3: fs-sandbox helper: protocol failure: boom');
  });

  it('keeps at most 4 KiB of stderr for the message', async () => {
    const launch = await fakeHelper(`process.stderr.write('e'.repeat(100000)); process.exitCode = 1;`);
    const error = await failureOf(runHelper(launch, request, {}));
    expect(error.kind).toBe('helper_failed');
    expect(error.message.length).toBeLessThanOrEqual(LIMITS.helperMaxStderrBytes + 40);
  });

  it('maps a launcher that cannot build the sandbox (bwrap: …) to sandbox_unavailable', async () => {
    const launch = await fakeHelper(
      `process.stderr.write('bwrap: setting up uid map: Permission denied\\n'); process.exitCode = 1;`,
    );
    const error = await failureOf(runHelper(launch, request, {}));
    expect(error.kind).toBe('sandbox_unavailable');
    expect(error.message).toBe(
      'the bwrap sandbox could not be set up: bwrap: setting up uid map: Permission denied',
    );
  });

  it('maps a launcher that cannot be started to sandbox_unavailable', async () => {
    const launch: LaunchSpec = {
      ...nodeLaunch(join(dir, 'x.cjs')),
      sandboxProgram: join(dir, 'no-such-bwrap'),
    };
    const error = await failureOf(runHelper(launch, request, {}));
    expect(error.kind).toBe('sandbox_unavailable');
    expect(error.message).toContain('cannot start');
  });

  it.each([
    ['garbage', `process.stdout.write('this is not json\\n');`, 'helper reply is unusable: it is not JSON'],
    ['no reply', ``, 'helper exited without a reply'],
    [
      'an unterminated line',
      `process.stdout.write(${JSON.stringify(OK_LINE)});`,
      'helper reply is not terminated by a newline',
    ],
    [
      'bytes after the reply',
      `process.stdout.write(${JSON.stringify(`${OK_LINE}\nextra`)});`,
      'helper reply has bytes after its announced end',
    ],
    [
      'a truncated binary trailer',
      `process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/readFile', response: { dataBase64: '' } }, binary: { field: 'dataBase64', length: 10 } }) + '\\nabc');`,
      'helper reply is truncated: 3 of 10 bytes',
    ],
    [
      'an unknown error kind',
      `process.stdout.write(JSON.stringify({ status: 'error', payload: { code: 1, message: 'x', data: { errorKind: 'made_up' } } }) + '\\n');`,
      'helper reply is unusable: its error kind "made_up" is unknown',
    ],
    [
      'an unknown operation',
      `process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/format', response: {} } }) + '\\n');`,
      'helper reply is unusable: its payload has no known operation or no response',
    ],
  ])('maps %s to internal_error', async (_name, source, message) => {
    const error = await failureOf(runHelper(await fakeHelper(source), request, {}));
    expect(error.kind).toBe('internal_error');
    expect(error.message).toBe(message);
  });

  it('refuses an oversized reply and kills the helper', async () => {
    const pidFile = join(dir, 'oversized.pid');
    const launch = await fakeHelper(`
      require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
      const block = Buffer.alloc(65536, 120);
      const pump = () => { while (process.stdout.write(block)) {} process.stdout.once('drain', pump); }; pump();`);
    const error = await failureOf(runHelper(launch, request, { maxReplyBytes: 100_000 }));
    expect(error.kind).toBe('internal_error');
    expect(error.message).toBe('helper reply exceeds the limit of 100000 bytes');
    expect(isAlive(Number(await waitForFile(pidFile)))).toBe(false);
  });

  it('refuses an announced binary length beyond the limit before allocating it', async () => {
    const launch = await fakeHelper(
      `process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/readFile', response: { dataBase64: '' } }, binary: { field: 'dataBase64', length: 1e15 } }) + '\\n');`,
    );
    const error = await failureOf(runHelper(launch, request, { maxReplyBytes: 1000 }));
    expect(error.message).toBe('helper reply exceeds the limit of 1000 bytes');
  });

  it('kills the whole process tree on timeout', async () => {
    const pidFile = join(dir, 'tree.pid');
    const launch = await fakeHelper(`
      const { spawn } = require('child_process');
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      require('fs').writeFileSync(${JSON.stringify(pidFile)}, process.pid + ' ' + child.pid);
      setInterval(() => {}, 1000);`);
    const started = Date.now();
    const run = runHelper(launch, request, { timeoutMs: 1500 });
    const pids = (await waitForFile(pidFile)).split(' ').map(Number);
    const error = await failureOf(run);
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('helper did not finish within 1500 ms; its process tree was killed');
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  it('kills the process tree when the caller aborts', async () => {
    const pidFile = join(dir, 'abort.pid');
    const launch = await fakeHelper(`
      require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const controller = new AbortController();
    const run = runHelper(launch, request, { signal: controller.signal });
    const pid = Number(await waitForFile(pidFile));
    controller.abort();
    const error = await failureOf(run);
    expect(error.kind).toBe('internal_error');
    expect(error.message).toBe('operation cancelled; the helper process tree was killed');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isAlive(pid)).toBe(false);
  });

  it('does not spawn at all when already aborted', async () => {
    const marker = join(dir, 'never.txt');
    const launch = await fakeHelper(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');`);
    const controller = new AbortController();
    controller.abort();
    await failureOf(runHelper(launch, request, { signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(readFile(marker)).rejects.toThrow();
  });
});
