import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildFixture, type Fixture } from './fixtures/conformance/fixture-tree.js';
import {
  CLI_BIN,
  ensureBuilt,
  REPO_ROOT,
  ServeProcess,
  startWebSocketServer,
  type WireReply,
} from './fixtures/conformance/serve-process.js';

const TOKEN = 'e2e-token-9f8e7d6c5b4a39281706';
let fixture: Fixture;
let dir: string;
let tokenFile: string;

beforeAll(async () => {
  ensureBuilt();
  fixture = await buildFixture();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-serve-e2e-'));
  tokenFile = join(dir, 'token');
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
});

afterAll(async () => {
  await fixture?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

function serveSync(args: string[]) {
  return spawnSync(process.execPath, [CLI_BIN, 'serve', ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    input: '',
  });
}

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    ws.once('error', reject);
  });
}

/** Opens an authorised WebSocket, runs the handshake, then sends each request and collects replies. */
async function wsSession(
  url: string,
  requests: Array<{ id: number; method: string; params: unknown }>,
  origin?: string,
) {
  const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` }, origin });
  const replies = new Map<string | number, WireReply>();
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    const reply = JSON.parse(String(data)) as WireReply;
    replies.set(reply.id, reply);
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const replyFor = async (id: string | number) => {
    while (!replies.has(id)) await new Promise<void>((resolve) => waiters.push(resolve));
    return replies.get(id) as WireReply;
  };
  ws.send(JSON.stringify({ id: 'init', method: 'initialize', params: { clientName: 'e2e' } }));
  await replyFor('init');
  ws.send(JSON.stringify({ method: 'initialized' }));
  for (const request of requests) ws.send(JSON.stringify(request));
  const results = await Promise.all(requests.map((request) => replyFor(request.id)));
  ws.close();
  return results;
}

describe('serve command line', () => {
  it('refuses unsafe or inconsistent listen options before serving', () => {
    const noToken = serveSync(['--listen', 'ws://127.0.0.1:0']);
    expect(noToken.status).toBe(2);
    expect(noToken.stderr).toContain('a ws:// listener needs --token-file');
    const remote = serveSync(['--listen', 'ws://0.0.0.0:0', '--token-file', tokenFile]);
    expect(remote.status).toBe(2);
    expect(remote.stderr).toContain(
      'refusing to listen on non-loopback address 0.0.0.0 without --allow-remote',
    );
    const stdioToken = serveSync(['--listen', 'stdio', '--token-file', tokenFile]);
    expect(stdioToken.status).toBe(2);
    const badScheme = serveSync(['--listen', 'tcp://127.0.0.1:1']);
    expect(badScheme.status).toBe(2);
    expect(badScheme.stderr).toContain('--listen must be `stdio` or `ws://HOST:PORT`');
    expect(serveSync(['--max-connections', '0']).status).toBe(2);
    expect(serveSync(['--listen', 'stdio', '--allow-origin', 'http://localhost:3000']).status).toBe(2);
    const badOrigin = serveSync([
      '--listen',
      'ws://127.0.0.1:0',
      '--token-file',
      tokenFile,
      '--allow-origin',
      'http://localhost:3000/app',
    ]);
    expect(badOrigin.status).toBe(2);
    expect(badOrigin.stderr).toContain('--allow-origin must be an origin');
  });

  it('refuses a token file that holds no usable token', async () => {
    const weak = join(dir, 'weak');
    await writeFile(weak, 'short\n');
    const result = serveSync(['--listen', 'ws://127.0.0.1:0', '--token-file', weak]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('at least 16 characters');
  });
});

describe('serve over WebSocket (real process)', () => {
  it('requires the bearer token on the upgrade and then serves sandboxed requests', async () => {
    const server = await startWebSocketServer(['--listen', 'ws://127.0.0.1:0', '--token-file', tokenFile]);
    try {
      expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      expect(await upgradeStatus(server.url, {})).toBe(401);
      expect(await upgradeStatus(server.url, { Authorization: 'Bearer not-the-token-000000000' })).toBe(401);
      const [plain, sandboxed, outside] = await wsSession(server.url, [
        { id: 1, method: 'fs/readFile', params: { path: fixture.uri('ro/hello.txt'), sandbox: null } },
        {
          id: 2,
          method: 'fs/readFile',
          params: { path: fixture.uri('ro/hello.txt'), sandbox: fixture.contexts.readOnly },
        },
        {
          id: 3,
          method: 'fs/readFile',
          params: { path: fixture.uri('outside/secret.txt'), sandbox: fixture.contexts.readOnly },
        },
      ]);
      expect(plain?.result).toEqual({ dataBase64: 'aGVsbG8gc2FuZGJveAo=' });
      expect(sandboxed?.result).toEqual({ dataBase64: 'aGVsbG8gc2FuZGJveAo=' });
      expect(outside?.error?.data.errorKind).toBe('permission_denied');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('refuses a handshake with an Origin (403, even with the token) unless --allow-origin names it', async () => {
    const server = await startWebSocketServer([
      '--listen',
      'ws://127.0.0.1:0',
      '--token-file',
      tokenFile,
      '--allow-origin',
      'http://localhost:3000',
      '--allow-origin',
      'https://app.example',
    ]);
    try {
      const bearer = { Authorization: `Bearer ${TOKEN}` };
      expect(await upgradeStatus(server.url, { ...bearer, Origin: 'https://evil.example' })).toBe(403);
      expect(await upgradeStatus(server.url, { ...bearer, Origin: 'http://localhost:3000/' })).toBe(403);
      const read = {
        id: 1,
        method: 'fs/readFile',
        params: { path: fixture.uri('ro/hello.txt'), sandbox: null },
      };
      for (const origin of [undefined, 'http://localhost:3000', 'https://app.example']) {
        const [reply] = await wsSession(server.url, [read], origin);
        expect(reply?.result, origin).toEqual({ dataBase64: 'aGVsbG8gc2FuZGJveAo=' });
      }
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('listens off loopback only with --allow-remote, and still requires the token', async () => {
    const server = await startWebSocketServer([
      '--listen',
      'ws://0.0.0.0:0',
      '--allow-remote',
      '--token-file',
      tokenFile,
    ]);
    try {
      const url = server.url.replace('0.0.0.0', '127.0.0.1');
      expect(await upgradeStatus(url, {})).toBe(401);
      expect(await upgradeStatus(url, { Authorization: `Bearer ${TOKEN}` })).toBe(101);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});

describe('audit log and statistics (real process)', () => {
  it('logs every operation without contents: a written secret appears neither raw nor as base64', async () => {
    const auditFile = join(dir, 'audit.jsonl');
    const secret = 'AKIA-super-SECRET-value-7c1d9e';
    const secretBase64 = Buffer.from(secret).toString('base64');
    const served = ServeProcess.start(['--audit-log', auditFile]);
    await served.handshake();
    const target = fixture.uri('rw/secret.env');
    expect(
      (
        await served.request('fs/writeFile', {
          path: target,
          dataBase64: secretBase64,
          sandbox: fixture.contexts.workspaceWrite,
        })
      ).result,
    ).toEqual({});
    expect((await served.request('fs/readFile', { path: target, sandbox: null })).result).toEqual({
      dataBase64: secretBase64,
    });
    expect(
      (
        await served.request('fs/writeFile', {
          path: fixture.uri('outside/x'),
          dataBase64: secretBase64,
          sandbox: fixture.contexts.workspaceWrite,
        })
      ).error?.data.errorKind,
    ).toBe('permission_denied');
    expect(await served.stop()).toBe(0);

    const text = await readFile(auditFile, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secretBase64);
    expect(text).not.toContain(fixture.root);
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({
        method: 'fs/writeFile',
        sandboxed: true,
        outcome: 'ok',
        bytesWritten: secret.length,
        bytesRead: 0,
      }),
      expect.objectContaining({
        method: 'fs/readFile',
        sandboxed: false,
        outcome: 'ok',
        bytesRead: secret.length,
      }),
      expect.objectContaining({
        method: 'fs/writeFile',
        outcome: 'denied',
        errorKind: 'permission_denied',
        bytesWritten: 0,
      }),
    ]);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(
        [
          'bytesRead',
          'bytesWritten',
          'connection',
          'durationMs',
          'errorKind',
          'method',
          'outcome',
          'paths',
          'sandboxed',
          'time',
        ].sort(),
      );
      expect(line.paths).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
    }
  });

  it('prints a statistics snapshot on SIGUSR1 and at exit with --stats', async () => {
    const served = ServeProcess.start(['--stats']);
    await served.handshake();
    await served.request('fs/readFile', { path: fixture.uri('ro/hello.txt') });
    await served.request('fs/readFile', { path: fixture.uri('ro/nope') });
    served.child.kill('SIGUSR1');
    while (!served.stderr.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 10));
    const live = JSON.parse(served.stderr.replace('fs-sandbox serve stats: ', '').split('\n')[0] as string);
    expect(live).toMatchObject({
      connections: { open: 1, total: 1, refused: 0 },
      requests: { total: 3, ok: 2, failed: 1, inFlight: 0, queued: 0 },
      bytes: { read: 14, written: 0 },
    });
    expect(await served.stop()).toBe(0);
    const atExit = served.stderr.trim().split('\n');
    expect(atExit).toHaveLength(2);
    expect(JSON.parse((atExit[1] as string).replace('fs-sandbox serve stats: ', ''))).toMatchObject({
      connections: { open: 0, total: 1 },
    });
  });
});
