import { describe, expect, it } from 'vitest';
import { makeServer, StdioClient } from './support/fake-server.js';

const READ = { path: 'file:///w/a.txt', sandbox: null };

describe('handshake', () => {
  it('answers initialize with a session id, honest environment facts and only supported capabilities', async () => {
    const client = new StdioClient(makeServer().server);
    const reply = await client.request('initialize', { clientName: 'demo-client' }, 1);
    expect(reply.id).toBe(1);
    const result = reply.result as { sessionId: string; environmentInfo: Record<string, unknown> };
    expect(result.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(result.environmentInfo.capabilities).toEqual({
      sandboxedFileStreaming: true,
      fileWriteStreaming: true,
      writeFileModes: true,
      errorKinds: true,
      processes: true,
      processTty: true,
    });
    // Replies omit "jsonrpc" and put id first, like the reference.
    expect(client.rawLines[0]?.startsWith('{"id":1,"result":{"sessionId":"')).toBe(true);
    await client.end();
  });

  it('gives each connection its own session id', async () => {
    const { server } = makeServer();
    const a = await new StdioClient(server).request('initialize', { clientName: 'a' });
    const b = await new StdioClient(server).request('initialize', { clientName: 'b' });
    expect(a.result?.sessionId).not.toBe(b.result?.sessionId);
  });

  it('refuses fs methods before initialize, before initialized, and a second initialize', async () => {
    const client = new StdioClient(makeServer().server);
    expect(await client.request('fs/readFile', READ, 1)).toEqual({
      error: {
        code: -32600,
        message: 'client must call initialize before using filesystem methods',
        data: { errorKind: 'invalid_request' },
      },
      id: 1,
    });
    await client.request('initialize', { clientName: 'x' }, 2);
    expect(await client.request('fs/readFile', READ, 3)).toMatchObject({
      error: { code: -32600, message: 'client must send initialized before using filesystem methods' },
    });
    expect(await client.request('fs/open', { handleId: 'h', path: READ.path }, 4)).toMatchObject({
      error: { code: -32600, message: 'client must send initialized before using filesystem methods' },
    });
    client.notify('initialized');
    expect(await client.request('initialize', { clientName: 'x' }, 5)).toEqual({
      error: {
        code: -32600,
        message: 'initialize may only be sent once per connection',
        data: { errorKind: 'invalid_request' },
      },
      id: 5,
    });
    expect(await client.request('fs/readFile', READ, 6)).toMatchObject({ error: { code: -32004 } });
    await client.end();
  });

  it('requires clientName, and a failed initialize can be retried', async () => {
    const client = new StdioClient(makeServer().server);
    expect(await client.request('initialize', {}, 1)).toEqual({
      error: {
        code: -32602,
        message: 'missing field `clientName`',
        data: { errorKind: 'invalid_params', field: 'clientName' },
      },
      id: 1,
    });
    expect(await client.request('initialize', { clientName: 7 }, 2)).toMatchObject({
      error: { code: -32602, message: 'invalid type: integer `7`, expected a string' },
    });
    expect((await client.request('initialize', { clientName: 'ok' }, 3)).result).toHaveProperty('sessionId');
    await client.end();
  });

  it('ignores an initialized notification sent before initialize', async () => {
    const client = new StdioClient(makeServer().server);
    client.notify('initialized');
    await client.request('initialize', { clientName: 'x' }, 1);
    expect(await client.request('fs/readFile', READ, 2)).toMatchObject({
      error: { message: 'client must send initialized before using filesystem methods' },
    });
    await client.end();
  });
});

describe('message handling', () => {
  it('answers unknown methods with -32601 naming the method, before or after the handshake', async () => {
    const client = new StdioClient(makeServer().server);
    expect(await client.request('fs/frobnicate', {}, 34)).toEqual({
      error: {
        code: -32601,
        message: 'fs-sandbox does not implement `fs/frobnicate`',
        data: { errorKind: 'invalid_request' },
      },
      id: 34,
    });
    await client.handshake();
    for (const method of ['fs/watchMissing', 'fs/watch', 'fs/move', 'initialized']) {
      expect((await client.request(method, {})).error?.code).toBe(-32601);
    }
    await client.end();
  });

  it('answers unparsable input with id -1 and keeps the connection usable', async () => {
    const client = new StdioClient(makeServer().server);
    client.send('{hello');
    const [reply] = await client.waitForReplies(1);
    expect(reply).toMatchObject({ error: { code: -32600, data: { errorKind: 'invalid_request' } }, id: -1 });
    expect(reply?.error?.message).toMatch(/^failed to parse JSON-RPC message from fs-sandbox stdio: /);
    expect((await client.request('initialize', { clientName: 'x' }, 1)).result).toBeDefined();
    await client.end();
  });

  it('echoes string and number ids, and accepts requests without "jsonrpc"', async () => {
    const client = new StdioClient(makeServer().server);
    client.send('{"id":"str-id","method":"initialize","params":{"clientName":"x"}}');
    expect((await client.replyFor('str-id')).result).toBeDefined();
    client.send('{"method":"initialized"}');
    client.send('{"id":0,"method":"fs/readFile","params":{"path":"file:///w/nope"}}');
    expect(await client.replyFor(0)).toMatchObject({ error: { code: -32004 } });
    await client.end();
  });

  it('echoes a valid id when the message is not a request, and uses -1 for an invalid id', async () => {
    const client = new StdioClient(makeServer().server);
    client.send('{"id":9,"params":{}}');
    expect(await client.replyFor(9)).toMatchObject({
      error: { code: -32600, message: expect.stringContaining('missing field `method`') },
    });
    client.send('{"id":10,"result":{}}');
    expect(await client.replyFor(10)).toMatchObject({
      error: { message: expect.stringContaining('unexpected response') },
    });
    client.send('{"id":1.5,"method":"initialize"}');
    client.send('{"id":null,"method":"initialize"}');
    client.send('[{"id":1,"method":"initialize"}]');
    const replies = await client.waitForReplies(5);
    expect(replies.slice(2).map((reply) => reply.id)).toEqual([-1, -1, -1]);
    expect(replies[4]?.error?.message).toContain('batch requests are not supported');
    await client.end();
  });

  it('skips blank lines and accepts CRLF line endings', async () => {
    const client = new StdioClient(makeServer().server);
    client.send('\n\r\n   \n{"id":1,"method":"initialize","params":{"clientName":"x"}}\r\n');
    const replies = await client.waitForReplies(1);
    expect(replies[0]?.result).toBeDefined();
    await client.end();
    expect(client.rawLines).toHaveLength(1);
  });

  it('bounds the method name quoted back in an error', async () => {
    const client = new StdioClient(makeServer().server);
    const reply = await client.request(`fs/${'x'.repeat(100_000)}`, {}, 1);
    expect(reply.error?.code).toBe(-32601);
    expect(reply.error?.message.length).toBeLessThan(200);
    await client.end();
  });
});
