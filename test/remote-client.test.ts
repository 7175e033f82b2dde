import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Broker, createBroker, isFsError } from '@fs-sandbox/broker';
import { connectBroker, type RemoteBroker, spawnBroker } from '@fs-sandbox/broker/remote';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, startWebSocketServer } from './fixtures/conformance/serve-process.js';
import { codexBinary } from './support/codex-binary.js';
import { createFixture, type Fixture, removeFixture, uri, workspaceContext } from './support/fixture.js';

/**
 * The remote client (`@fs-sandbox/broker/remote`) against the real `fs-sandbox serve`, on stdio
 * and on WebSocket, with real bwrap: the same workload gives the same results as `createBroker`,
 * and a server that dies mid-request rejects every pending call with `connection_lost` at once.
 */

const TOKEN = 'remote-client-test-token-0123456789';
let fixture: Fixture;
let tokenFile: string;

beforeAll(async () => {
  ensureBuilt();
  fixture = await createFixture('root');
  tokenFile = join(fixture.tmp, 'token');
  await writeFile(tokenFile, TOKEN);
});

afterAll(async () => {
  if (fixture) await removeFixture(fixture);
});

/** A workload touching every exposed helper method, with failures, in a fresh directory per broker. */
async function workload(broker: Broker, name: string): Promise<unknown[]> {
  const sandbox = workspaceContext(fixture) as never;
  const dir = join(fixture.ws, name);
  await rm(dir, { recursive: true, force: true });
  const at = (path: string) => uri(join(dir, path));
  const outcome = async (run: () => Promise<unknown>) => {
    try {
      return { ok: await run() };
    } catch (error) {
      if (!isFsError(error)) throw error;
      return { kind: error.kind, code: error.code, message: error.message.replaceAll(dir, '<dir>') };
    }
  };
  const steps: Array<() => Promise<unknown>> = [
    () => broker.call('fs/createDirectory', { path: at('a/b'), sandbox }),
    () => broker.call('fs/writeFile', { path: at('a/one.txt'), dataBase64: 'b25lCg==', sandbox }),
    () => broker.call('fs/writeFile', { path: at('a/one.txt'), dataBase64: 'eA==', mode: 'create', sandbox }),
    async () =>
      (await broker.call('fs/readFile', { path: at('a/one.txt'), sandbox })).dataBase64.toString('utf8'),
    () => broker.call('fs/copy', { sourcePath: at('a'), destinationPath: at('c'), recursive: true, sandbox }),
    async () => (await broker.call('fs/readDirectory', { path: at('c'), sandbox })).entries,
    async () => {
      const { modifiedAtMs, createdAtMs, accessedAtMs, ...rest } = await broker.call('fs/getMetadata', {
        path: at('c/one.txt'),
        sandbox,
      });
      const times = [modifiedAtMs, createdAtMs, accessedAtMs];
      return { ...rest, times: times.every((time) => typeof time === 'number') };
    },
    async () =>
      (await broker.call('fs/walk', { path: at('.'), sandbox })).entries.map((entry) =>
        entry.path.replaceAll(dir, '<dir>'),
      ),
    async () =>
      (await broker.call('fs/canonicalize', { path: at('c/one.txt'), sandbox })).path.replaceAll(
        dir,
        '<dir>',
      ),
    () => broker.call('fs/remove', { path: at('c'), sandbox }),
    () => broker.call('fs/readFile', { path: at('missing'), sandbox }),
    () => broker.call('fs/writeFile', { path: uri(join(fixture.outside, 'x')), dataBase64: 'eA==', sandbox }),
    () => broker.call('fs/readFile', { path: uri(join(fixture.ws, 'denied.txt')), sandbox }),
    () =>
      broker.call('fs/writeFile', { path: at('a/one.txt'), dataBase64: 'eA==', sandBox: sandbox } as never),
  ];
  const results: unknown[] = [];
  for (const step of steps) results.push(await outcome(step));
  return results;
}

describe('the remote client', () => {
  it('gives createBroker’s results on stdio and on WebSocket', async () => {
    const local = createBroker();
    const expected = await workload(local, 'local');
    await local.close();
    expect(expected).toContainEqual({ ok: 'one\n' });
    expect(expected.filter((step) => (step as { kind?: string }).kind !== undefined)).toHaveLength(5);

    const stdio = await spawnBroker({
      command: { file: process.execPath, args: [CLI_BIN, 'serve', '--listen', 'stdio'] },
    });
    expect(await workload(stdio, 'stdio')).toEqual(expected);
    await stdio.close();

    const server = await startWebSocketServer(['--listen', 'ws://127.0.0.1:0', '--token-file', tokenFile]);
    try {
      const remote = await connectBroker({ url: server.url, token: TOKEN });
      expect(remote.serverInfo).toMatchObject({ environmentInfo: { executor: 'fs-sandbox' } });
      expect(await workload(remote, 'ws')).toEqual(expected);
      const { info } = await remote.callWithInfo('fs/getMetadata', {
        path: uri(fixture.ws),
        sandbox: workspaceContext(fixture) as never,
      });
      expect(info).toEqual({ sandboxed: true, backend: 'remote' });
      const explained = {
        path: uri(join(fixture.ws, 'denied.txt')),
        sandbox: workspaceContext(fixture) as never,
      };
      const localBroker = createBroker({ pool: false });
      expect(await remote.explainAccess(explained)).toEqual(await localBroker.explainAccess(explained));
      await localBroker.close();
      await remote.close();
      await expect(remote.call('fs/getMetadata', { path: uri(fixture.ws) })).rejects.toMatchObject({
        kind: 'connection_lost',
      });
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('runs commands on the server under its sandbox: run and spawn as createBroker’s, streamed, lossless, killable', async () => {
    const sandbox = workspaceContext(fixture) as never;
    const cwd = uri(fixture.ws);
    const outsideFile = join(fixture.outside, 'remote-command.txt');
    const script = `echo out; echo err >&2; echo x > ${outsideFile}; exit 3`;
    const local = createBroker({ pool: false });
    const expected = await local.run(['sh', '-c', script], { cwd, sandbox });
    await local.close();
    expect(expected).toMatchObject({ exitCode: 3, stdout: 'out\n', sandboxed: true });

    const server = await startWebSocketServer(['--listen', 'ws://127.0.0.1:0', '--token-file', tokenFile]);
    const remote = await connectBroker({ url: server.url, token: TOKEN });
    try {
      expect(await remote.run(['sh', '-c', script], { cwd, sandbox })).toEqual(expected);
      await expect(stat(outsideFile)).rejects.toMatchObject({ code: 'ENOENT' });
      // stdin is sent, then ended (the command reads EOF); Buffers on request.
      expect(await remote.run(['wc', '-c'], { cwd, sandbox, stdin: 'abcde' })).toMatchObject({
        exitCode: 0,
        stdout: '5\n',
      });
      const bytes = await remote.run(['printf', 'ab'], { cwd, sandbox, encoding: 'buffer' });
      expect(Buffer.isBuffer(bytes.stdout) && bytes.stdout.toString()).toBe('ab');

      // Output arrives while the command runs, and 8 MiB read slowly arrive whole.
      const ticking = await remote.spawn(['sh', '-c', 'echo first; sleep 30'], { cwd, sandbox });
      const first = await new Promise<string>((resolve) =>
        ticking.stdout.once('data', (chunk) => resolve(String(chunk))),
      );
      expect(first).toBe('first\n');
      ticking.kill();
      expect(await ticking.exited).toMatchObject({ exitCode: 137, sandboxed: true });
      const size = 8 * 1024 * 1024;
      const big = await remote.spawn(['head', '-c', String(size), '/dev/zero'], {
        cwd,
        sandbox,
        stdin: 'ignore',
      });
      let received = 0;
      for await (const chunk of big.stdout) {
        received += chunk.length;
        if (received < size / 2) await new Promise((resolve) => setImmediate(resolve));
      }
      expect(received).toBe(size);
      expect(await big.exited).toMatchObject({ exitCode: 0, capReached: false });
      // The connection still answers once the stream was drained.
      expect((await remote.call('fs/getMetadata', { path: cwd, sandbox })).isDirectory).toBe(true);

      // What only a local broker has, and what a remote one needs, are typed refusals.
      await expect(remote.run(['true'], { sandbox: null })).rejects.toMatchObject({
        kind: 'invalid_params',
        extra: { field: 'cwd' },
      });
      const aborted = new AbortController();
      const cancelled = remote.run(['sleep', '30'], { cwd, sandbox, signal: aborted.signal });
      aborted.abort();
      await expect(cancelled).rejects.toMatchObject({ kind: 'internal_error' });
    } finally {
      await remote.close();
      server.child.kill('SIGKILL');
    }
  });

  it('refuses a wrong token as a lost connection that names the HTTP status', async () => {
    const server = await startWebSocketServer(['--listen', 'ws://127.0.0.1:0', '--token-file', tokenFile]);
    try {
      await expect(connectBroker({ url: server.url, token: 'wrong' })).rejects.toMatchObject({
        kind: 'connection_lost',
        message: expect.stringContaining('HTTP 401'),
      });
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('rejects every pending call with connection_lost within a second of the server dying', async () => {
    const server = await startWebSocketServer(['--listen', 'ws://127.0.0.1:0', '--token-file', tokenFile]);
    const big = join(fixture.ws, 'big-remote');
    await mkdir(big, { recursive: true });
    await writeFile(join(big, 'f'), Buffer.alloc(64 * 1024 * 1024));
    let remote: RemoteBroker | undefined;
    try {
      remote = await connectBroker({ url: server.url, token: TOKEN });
      const sandbox = workspaceContext(fixture) as never;
      const pending = Array.from({ length: 8 }, () =>
        (remote as RemoteBroker).call('fs/readFile', { path: uri(join(big, 'f')), sandbox }).then(
          () => 'resolved',
          (error: unknown) => error,
        ),
      );
      server.child.kill('SIGKILL');
      const killedAt = Date.now();
      const outcomes = await Promise.all(pending);
      expect(Date.now() - killedAt).toBeLessThan(1_000);
      for (const outcome of outcomes) expect(outcome).toMatchObject({ kind: 'connection_lost' });
      await expect(remote.call('fs/readFile', { path: uri(join(big, 'f')), sandbox })).rejects.toMatchObject({
        kind: 'connection_lost',
      });
    } finally {
      server.child.kill('SIGKILL');
      await remote?.close();
      await rm(big, { recursive: true, force: true });
    }
    // Nothing of the killed server's doing was left half-written in the workspace.
    expect(await readFile(join(fixture.ws, 'hello.txt'), 'utf8')).toBe('hello sandbox\n');
  });
});

const CODEX = codexBinary();

describe.skipIf(CODEX === null)(
  CODEX === null
    ? `the remote client against the reference exec-server: SKIPPED, @openai/codex 0.171.0 installed no binary for ${process.platform}-${process.arch}`
    : 'the remote client against the reference Codex exec-server 0.171.0 (the methods both have)',
  () => {
    it('gives the same results and error kinds from the reference as from fs-sandbox serve', async () => {
      const home = await mkdtemp(join(tmpdir(), 'fs-sandbox-codex-home-'));
      const dir = join(fixture.ws, 'peer');
      await mkdir(dir, { recursive: true });
      const at = (name: string) => uri(join(dir, name));
      /** Unsandboxed (`sandbox: null`), as the reference serves it without a platform sandbox. */
      const steps = async (broker: RemoteBroker) => {
        const outcome = async (run: () => Promise<unknown>) =>
          run().then(
            (ok) => ({ ok }),
            (error: unknown) => ({ kind: isFsError(error) ? error.kind : String(error) }),
          );
        await rm(join(dir, 'sub'), { recursive: true, force: true });
        return [
          await outcome(() =>
            broker.call('fs/writeFile', { path: at('a.txt'), dataBase64: 'aGVsbG8K', sandbox: null }),
          ),
          await outcome(async () =>
            (await broker.call('fs/readFile', { path: at('a.txt'), sandbox: null })).dataBase64.toString(
              'utf8',
            ),
          ),
          await outcome(() =>
            broker.call('fs/createDirectory', { path: at('sub/deep'), recursive: true, sandbox: null }),
          ),
          await outcome(() =>
            broker.call('fs/copy', {
              sourcePath: at('a.txt'),
              destinationPath: at('sub/b.txt'),
              recursive: false,
              sandbox: null,
            }),
          ),
          await outcome(async () => {
            const { entries } = await broker.call('fs/readDirectory', { path: at('sub'), sandbox: null });
            return entries.map((entry) => [entry.fileName, entry.isDirectory, entry.isFile]).sort();
          }),
          await outcome(async () => {
            const { isFile, isDirectory, size } = await broker.call('fs/getMetadata', {
              path: at('sub/b.txt'),
              sandbox: null,
            });
            return { isFile, isDirectory, size };
          }),
          await outcome(() => broker.call('fs/remove', { path: at('sub'), recursive: true, sandbox: null })),
          await outcome(() => broker.call('fs/readFile', { path: at('missing'), sandbox: null })),
          // A command, through process/start and its notifications (the reference's wire has no
          // end of stdin: none is given).
          await outcome(async () => {
            const { exitCode, stdout, stderr } = await (broker as RemoteBroker).run(
              ['sh', '-c', 'echo hi; echo oops >&2; exit 2'],
              { cwd: at(''), sandbox: null },
            );
            return { exitCode, stdout, stderr };
          }),
        ];
      };
      const reference = await spawnBroker({
        command: {
          file: CODEX as string,
          args: ['exec-server', '--listen', 'stdio'],
          env: { PATH: '/usr/bin:/bin', CODEX_HOME: home },
        },
      });
      const ours = await spawnBroker({
        command: { file: process.execPath, args: [CLI_BIN, 'serve', '--listen', 'stdio'] },
      });
      try {
        const fromReference = await steps(reference);
        expect(fromReference).toContainEqual({ ok: 'hello\n' });
        expect(fromReference.at(-2)).toEqual({ kind: 'not_found' });
        expect(fromReference.at(-1)).toEqual({ ok: { exitCode: 2, stdout: 'hi\n', stderr: 'oops\n' } });
        // The reference ignores outputBytesCap (an extension): the client keeps it.
        const capped = await reference.run(['printf', 'abcdef'], {
          cwd: at(''),
          sandbox: null,
          outputBytesCap: 3,
        });
        expect(capped).toMatchObject({ exitCode: 0, stdout: 'abc', capReached: true });
        expect(await steps(ours)).toEqual(fromReference);
      } finally {
        await reference.close();
        await ours.close();
        await rm(home, { recursive: true, force: true });
      }
    });
  },
);
