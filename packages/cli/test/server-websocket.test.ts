import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { parseAllowedOrigin } from '../src/server/origin-check.js';
import type { FsRpcServer } from '../src/server/server.js';
import type { WebSocketListener } from '../src/server/ws-transport.js';
import { makeServer, type Reply } from './support/fake-server.js';

const TOKEN = 'test-token-0123456789abcdef';
let server: FsRpcServer | undefined;
let listener: WebSocketListener | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  listener = undefined;
});

async function start(options: Parameters<typeof makeServer>[0] = {}, allowedOrigins: string[] = []) {
  const made = makeServer(options);
  server = made.server;
  listener = await made.server.listenWebSocket({ host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins });
  return { ...made, url: listener.url };
}

/** Resolves with the HTTP status of a refused upgrade, or 101 when the socket opened. */
function connectStatus(url: string, headers: Record<string, string>): Promise<number> {
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

class WsClient {
  readonly replies: Reply[] = [];
  private waiters: Array<() => void> = [];
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      this.replies.push(JSON.parse(String(data)) as Reply);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static open(url: string, token = TOKEN, origin?: string): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` }, origin });
      ws.once('open', () => resolve(new WsClient(ws)));
      ws.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  async replyFor(id: string | number): Promise<Reply> {
    for (;;) {
      const found = this.replies.find((reply) => reply.id === id);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async handshake(): Promise<void> {
    this.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { clientName: 'ws-test' } });
    await this.replyFor('init');
    this.send({ jsonrpc: '2.0', method: 'initialized' });
  }
}

describe('WebSocket transport', () => {
  it('refuses the upgrade with 401 without the right bearer token', async () => {
    const { url, server: running } = await start();
    expect(await connectStatus(url, {})).toBe(401);
    expect(await connectStatus(url, { Authorization: 'Bearer wrong-token-0123456789abcdef' })).toBe(401);
    expect(await connectStatus(url, { Authorization: `Bearer ${TOKEN}x` })).toBe(401);
    expect(await connectStatus(url, { Authorization: TOKEN })).toBe(401);
    expect(await connectStatus(url, { Authorization: `Basic ${TOKEN}` })).toBe(401);
    expect(await connectStatus(url, { Authorization: `Bearer ${TOKEN}` })).toBe(101);
    expect(await connectStatus(url, { Authorization: `bearer ${TOKEN}` })).toBe(101);
    expect(running.stats().connections).toMatchObject({ refused: 5, total: 2 });
  });

  it('refuses a handshake that carries an Origin with 403 unless that origin is allowed, token or not', async () => {
    const { url, broker, server: running } = await start({}, ['http://localhost:3000']);
    const bearer = { Authorization: `Bearer ${TOKEN}` };
    expect(await connectStatus(url, { ...bearer, Origin: 'https://evil.example' })).toBe(403);
    expect(await connectStatus(url, { Origin: 'https://evil.example' })).toBe(403);
    // Exact names only: another scheme, port, case, a path or two origins are different strings.
    for (const origin of [
      'https://localhost:3000',
      'http://localhost:3001',
      'http://LOCALHOST:3000',
      'http://localhost:3000/',
      'http://localhost:3000, https://evil.example',
      'null',
      '',
    ]) {
      expect(await connectStatus(url, { ...bearer, Origin: origin }), origin).toBe(403);
    }
    expect(await connectStatus(url, { ...bearer, 'Sec-WebSocket-Origin': 'https://evil.example' })).toBe(403);
    expect(await connectStatus(url, { Origin: 'http://localhost:3000' })).toBe(401);
    expect(running.stats().connections).toMatchObject({ refused: 11, total: 0 });
    expect(broker.calls).toEqual([]);

    broker.files.set('file:///w/f', Buffer.from('from a page'));
    for (const origin of [undefined, 'http://localhost:3000']) {
      const client = await WsClient.open(url, TOKEN, origin);
      await client.handshake();
      client.send({ id: 1, method: 'fs/readFile', params: { path: 'file:///w/f' } });
      expect((await client.replyFor(1)).result).toEqual({
        dataBase64: Buffer.from('from a page').toString('base64'),
      });
      client.ws.close();
    }
  });

  it('refuses every handshake with an Origin when no origin is allowed', async () => {
    const { url } = await start();
    const bearer = { Authorization: `Bearer ${TOKEN}` };
    expect(await connectStatus(url, { ...bearer, Origin: 'http://127.0.0.1:8765' })).toBe(403);
    expect(await connectStatus(url, bearer)).toBe(101);
  });

  it('answers plain HTTP with 426 and binds loopback', async () => {
    const { url } = await start();
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const status = await new Promise<number>((resolve) => {
      get(url.replace('ws:', 'http:'), (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
    });
    expect(status).toBe(426);
  });

  it('serves concurrent clients with interleaved, overlapping ids', async () => {
    const { url, broker } = await start();
    for (let c = 0; c < 4; c += 1) broker.files.set(`file:///w/f${c}`, Buffer.from(`content ${c}`));
    const clients = await Promise.all([0, 1, 2, 3].map(() => WsClient.open(url)));
    await Promise.all(clients.map((client) => client.handshake()));
    for (let id = 1; id <= 5; id += 1) {
      clients.forEach((client, c) => {
        client.send({ id, method: 'fs/readFile', params: { path: `file:///w/f${c}` } });
      });
    }
    for (const [c, client] of clients.entries()) {
      for (let id = 1; id <= 5; id += 1) {
        expect((await client.replyFor(id)).result).toEqual({
          dataBase64: Buffer.from(`content ${c}`).toString('base64'),
        });
      }
    }
    for (const client of clients) client.ws.close();
  });

  it('closes with 1009 on an oversized message and keeps serving other clients', async () => {
    const { url } = await start({ maxMessageBytes: 1024 });
    const big = await WsClient.open(url);
    const other = await WsClient.open(url);
    const closed = new Promise<number>((resolve) => big.ws.once('close', (code) => resolve(code)));
    big.ws.send('x'.repeat(4096));
    expect(await closed).toBe(1009);
    await other.handshake();
    other.send({ id: 1, method: 'fs/getMetadata', params: { path: 'file:///w/none' } });
    expect((await other.replyFor(1)).error?.code).toBe(-32004);
    other.ws.close();
  });

  it('refuses connections beyond --max-connections with 503 until one closes', async () => {
    const { url, server: running } = await start({ maxConnections: 2 });
    const first = await WsClient.open(url);
    await WsClient.open(url);
    expect(await connectStatus(url, { Authorization: `Bearer ${TOKEN}` })).toBe(503);
    const gone = new Promise((resolve) => first.ws.once('close', resolve));
    first.ws.close();
    await gone;
    while (running.stats().connections.open > 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await connectStatus(url, { Authorization: `Bearer ${TOKEN}` })).toBe(101);
  });

  it('aborts in-flight calls when a client disconnects', async () => {
    const { url, broker, server: running } = await start();
    broker.files.set('file:///w/slow', Buffer.from('s'));
    broker.holdPaths.add('file:///w/slow');
    const client = await WsClient.open(url);
    await client.handshake();
    client.send({ id: 1, method: 'fs/readFile', params: { path: 'file:///w/slow' } });
    while (broker.running === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    client.ws.terminate();
    while (broker.aborted.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(broker.aborted).toEqual(['file:///w/slow']);
    while (running.stats().connections.open > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  });
});

describe('parseAllowedOrigin', () => {
  it('accepts an origin exactly as browsers send it and refuses anything else', () => {
    expect(parseAllowedOrigin('http://localhost:3000')).toBe('http://localhost:3000');
    expect(parseAllowedOrigin('https://app.example')).toBe('https://app.example');
    for (const text of [
      'https://app.example/',
      'https://app.example/x',
      'HTTPS://app.example',
      'null',
      'file:///x',
      'app.example',
      '',
    ]) {
      expect(() => parseAllowedOrigin(text), text).toThrow(/--allow-origin must be an origin/);
    }
  });
});
