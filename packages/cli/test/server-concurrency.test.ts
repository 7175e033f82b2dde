import { describe, expect, it } from 'vitest';
import { readyClient } from './support/fake-server.js';

const SLOW = 'file:///w/slow.txt';
const FAST = 'file:///w/fast.txt';

function tick(ms = 20): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function readLine(id: number | string, path: string, padding = ''): string {
  return JSON.stringify({ id, method: 'fs/readFile', params: { path, sandbox: null, padding } });
}

describe('concurrency on one connection', () => {
  it('runs requests side by side and matches replies by id', async () => {
    const { client, broker } = await readyClient();
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.files.set(FAST, Buffer.from('fast'));
    broker.holdPaths.add(SLOW);
    client.send(readLine(1, SLOW));
    client.send(readLine(2, FAST));
    expect((await client.replyFor(2)).result).toEqual({ dataBase64: Buffer.from('fast').toString('base64') });
    broker.releaseAll();
    expect((await client.replyFor(1)).result).toEqual({ dataBase64: Buffer.from('slow').toString('base64') });
    // Replies left in arrival order: the fast one first, although it was sent second.
    expect(client.rawLines.slice(1).map((line) => JSON.parse(line).id)).toEqual([2, 1]);
    await client.end();
  });

  it('with concurrency 1 answers in order, like the reference', async () => {
    const { client, broker } = await readyClient({ concurrency: 1 });
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.files.set(FAST, Buffer.from('fast'));
    broker.holdPaths.add(SLOW);
    client.send(readLine(1, SLOW));
    client.send(readLine(2, FAST));
    await tick();
    expect(client.rawLines).toHaveLength(1);
    broker.releaseAll();
    await client.replyFor(2);
    expect(client.rawLines.slice(1).map((line) => JSON.parse(line).id)).toEqual([1, 2]);
    expect(broker.maxRunning).toBe(1);
    await client.end();
  });

  it('with concurrency 1 keeps even instant answers (parse errors, unknown methods) in arrival order', async () => {
    const { client, broker } = await readyClient({ concurrency: 1 });
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.holdPaths.add(SLOW);
    client.send(readLine(1, SLOW));
    client.send('{broken');
    client.send(JSON.stringify({ id: 2, method: 'fs/frobnicate' }));
    client.send(JSON.stringify({ id: 3, method: 'initialize', params: { clientName: 'again' } }));
    await tick();
    expect(client.rawLines).toHaveLength(1);
    broker.releaseAll();
    await client.waitForReplies(5);
    expect(client.rawLines.slice(1).map((line) => JSON.parse(line).id)).toEqual([1, -1, 2, 3]);
    await client.end();
  });

  it('refuses requests beyond the running and queued bounds, and serves the rest', async () => {
    const { client, broker, server } = await readyClient({ concurrency: 2, maxQueued: 3 });
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.holdPaths.add(SLOW);
    for (let id = 1; id <= 10; id += 1) client.send(readLine(id, SLOW));
    const refused = await Promise.all([6, 7, 8, 9, 10].map((id) => client.replyFor(id)));
    for (const reply of refused) {
      expect(reply.error).toMatchObject({ code: -32600, data: { errorKind: 'invalid_request' } });
      expect(reply.error?.message).toContain('too many pending requests on this connection');
    }
    expect(server.stats().requests).toMatchObject({ inFlight: 2, queued: 3, rejected: 5 });
    expect(broker.maxRunning).toBe(2);
    while (broker.running > 0 || server.stats().requests.queued > 0) {
      broker.releaseAll();
      await tick(5);
    }
    for (let id = 1; id <= 5; id += 1) expect((await client.replyFor(id)).result).toBeDefined();
    await client.end();
  });

  it('bounds the bytes held by pending requests', async () => {
    const { client, broker } = await readyClient({ maxMessageBytes: 1000 });
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.holdPaths.add(SLOW);
    const padding = 'p'.repeat(800);
    client.send(readLine(1, SLOW, padding));
    client.send(readLine(2, SLOW, padding));
    client.send(readLine(3, SLOW, padding));
    expect((await client.replyFor(3)).error?.message).toContain('too many pending requests');
    broker.releaseAll();
    await tick();
    broker.releaseAll();
    expect((await client.replyFor(1)).result).toBeDefined();
    expect((await client.replyFor(2)).result).toBeDefined();
    await client.end();
  });
});

describe('connection clean-up', () => {
  it('aborts running broker calls and frees handles when the reader goes away', async () => {
    const { client, broker, server } = await readyClient();
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.files.set(FAST, Buffer.from('fast'));
    await client.request('fs/open', { handleId: 'h', path: FAST });
    broker.holdPaths.add(SLOW);
    client.send(readLine(1, SLOW));
    client.send(readLine(2, SLOW));
    await tick();
    expect(server.stats()).toMatchObject({
      requests: { inFlight: 2 },
      handles: { open: 1 },
      connections: { open: 1 },
    });
    client.output.destroy();
    await client.done;
    expect(broker.aborted).toEqual([SLOW, SLOW]);
    expect(server.stats()).toMatchObject({
      requests: { inFlight: 0 },
      handles: { open: 0 },
      connections: { open: 0 },
    });
  });

  it('finishes accepted requests after end of input before closing (half-close)', async () => {
    const { client, broker, server } = await readyClient();
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.holdPaths.add(SLOW);
    client.send(readLine(1, SLOW));
    await tick();
    client.input.end();
    await tick();
    broker.releaseAll();
    await client.done;
    expect((await client.replyFor(1)).result).toEqual({ dataBase64: Buffer.from('slow').toString('base64') });
    expect(broker.aborted).toEqual([]);
    expect(server.stats().connections).toMatchObject({ open: 0, total: 1 });
  });

  it('server.close() aborts every connection', async () => {
    const { client, broker, server } = await readyClient();
    broker.files.set(SLOW, Buffer.from('slow'));
    broker.holdPaths.add(SLOW);
    client.send(readLine(1, SLOW));
    await tick();
    await server.close();
    expect(broker.aborted).toEqual([SLOW]);
    expect(server.stats().requests.inFlight).toBe(0);
  });
});
