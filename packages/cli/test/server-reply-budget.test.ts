import { describe, expect, it } from 'vitest';
import { ReplyBudget } from '../src/server/reply-budget.js';
import { RequestScheduler } from '../src/server/request-scheduler.js';
import { makeServer, readyClient, StdioClient } from './support/fake-server.js';

const KiB = 1024;
const FILE_BYTES = 256 * KiB;

function tick(ms = 20): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

/** Requests as one chunk, so the server receives them all before its output backs up. */
function readLines(ids: readonly number[], path: (id: number) => string): string {
  return ids
    .map((id) => `${JSON.stringify({ id, method: 'fs/readFile', params: { path: path(id) } })}\n`)
    .join('');
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const fileOf = (id: number) => `file:///w/f${id}`;
const contentOf = (id: number) => Buffer.alloc(FILE_BYTES, id);
const readCalls = (broker: { calls: Array<{ method: string }> }) =>
  broker.calls.filter((call) => call.method === 'fs/readFile').length;

describe('ReplyBudget', () => {
  it('lets requests start while the connection and the server hold less than their budgets', () => {
    const budget = new ReplyBudget({ perConnection: 100, total: 150 });
    const a = budget.open(() => undefined);
    const b = budget.open(() => undefined);
    expect(a.mayStart(3)).toBe(true);
    const releaseA = a.hold(100);
    expect(a.mayStart(0)).toBe(false);
    expect(b.mayStart(1)).toBe(true);
    b.hold(50);
    expect(budget.held).toBe(150);
    // The server's budget is full: b, which holds something, waits; a fresh connection gets one.
    expect(b.mayStart(0)).toBe(false);
    const c = budget.open(() => undefined);
    expect(c.mayStart(0)).toBe(true);
    expect(c.mayStart(1)).toBe(false);
    releaseA();
    releaseA();
    expect(budget.held).toBe(50);
    expect(a.held).toBe(0);
    expect(b.mayStart(1)).toBe(true);
  });

  it('wakes every connection when bytes are released, and gives back what a closed one held', () => {
    const budget = new ReplyBudget({ perConnection: 10, total: 10 });
    let wokenA = 0;
    let wokenB = 0;
    const a = budget.open(() => {
      wokenA += 1;
    });
    budget.open(() => {
      wokenB += 1;
    });
    const release = a.hold(7);
    a.hold(3);
    release();
    expect([wokenA, wokenB]).toEqual([1, 1]);
    a.close();
    expect(budget.held).toBe(0);
    expect(wokenB).toBe(2);
    // Nothing counts for a closed connection, and it is woken no more.
    a.hold(5)();
    expect(budget.held).toBe(0);
    expect(wokenA).toBe(1);
  });
});

describe('RequestScheduler with a closed start gate', () => {
  it('queues admitted jobs up to the queue bound, refuses the rest, and starts them on resume', async () => {
    let open = false;
    const scheduler = new RequestScheduler(
      { maxInFlight: 2, maxQueued: 3, maxPendingBytes: 1000 },
      () => open,
    );
    const started: number[] = [];
    const job = (n: number) => ({
      bytes: 0,
      key: null,
      run: async () => {
        started.push(n);
      },
    });
    expect(range(1, 5).map((n) => scheduler.trySchedule(job(n)))).toEqual([true, true, true, false, false]);
    expect([scheduler.inFlight, scheduler.queued]).toEqual([0, 3]);
    scheduler.resume();
    expect(started).toEqual([]);
    open = true;
    scheduler.resume();
    expect(started).toEqual([1, 2]);
    await scheduler.whenIdle();
    expect(started).toEqual([1, 2, 3]);
  });
});

describe('the reply budget on a connection whose client stops reading', () => {
  it('stops starting requests while replies wait, and answers every one once the client reads', async () => {
    const { client, broker, server } = await readyClient({ concurrency: 2, maxUnsentBytes: 64 * KiB });
    for (const id of range(1, 12)) broker.files.set(fileOf(id), contentOf(id));
    client.output.pause();
    client.send(readLines(range(1, 12), fileOf));
    await until(() => server.stats().requests.inFlight === 0, 'the first requests to finish');
    await tick();
    // Both slots started while nothing was held; their replies filled the budget and the rest wait.
    expect(readCalls(broker)).toBe(2);
    expect(server.stats().requests).toMatchObject({ inFlight: 0, queued: 10 });
    expect(server.stats().bytes.unsent).toBeGreaterThan(2 * FILE_BYTES);
    client.output.resume();
    for (const id of range(1, 12)) {
      expect((await client.replyFor(id)).result).toEqual({ dataBase64: contentOf(id).toString('base64') });
    }
    expect(server.stats().bytes.unsent).toBe(0);
    await client.end();
  });

  it('serves a reading client one request at a time while a stalled one holds the whole server budget', async () => {
    const { server, broker } = makeServer({ concurrency: 4, maxUnsentBytesTotal: 64 * KiB });
    for (const id of range(1, 20)) broker.files.set(fileOf(id), contentOf(id));
    const stalled = new StdioClient(server);
    const reading = new StdioClient(server);
    await stalled.handshake();
    await reading.handshake();
    stalled.output.pause();
    stalled.send(readLines(range(1, 8), fileOf));
    await until(() => server.stats().requests.inFlight === 0, 'the stalled client’s requests to finish');
    expect(server.stats().bytes.unsent).toBeGreaterThan(64 * KiB);
    for (const id of range(11, 20)) broker.holdPaths.add(fileOf(id));
    reading.send(readLines(range(11, 20), fileOf));
    for (const id of range(11, 20)) {
      await until(() => broker.running === 1, `request ${id} to start`);
      await tick();
      expect(broker.running).toBe(1);
      broker.releaseAll();
      expect((await reading.replyFor(id)).result).toEqual({ dataBase64: contentOf(id).toString('base64') });
    }
    // The stalled client's requests beyond its first four are still waiting; reading releases them.
    expect(server.stats().requests.queued).toBe(4);
    stalled.output.resume();
    for (const id of range(1, 8)) {
      expect((await stalled.replyFor(id)).result).toEqual({ dataBase64: contentOf(id).toString('base64') });
    }
    await Promise.all([stalled.end(), reading.end()]);
    expect(server.stats().bytes.unsent).toBe(0);
  });

  it('gives back the bytes of a client that goes away without reading', async () => {
    const { client, broker, server } = await readyClient({ maxUnsentBytes: 64 * KiB });
    for (const id of range(1, 4)) broker.files.set(fileOf(id), contentOf(id));
    client.output.pause();
    client.send(readLines(range(1, 4), fileOf));
    await until(() => server.stats().requests.inFlight === 0, 'the requests to finish');
    expect(server.stats().bytes.unsent).toBeGreaterThan(0);
    client.output.destroy();
    await client.done;
    expect(server.stats().bytes.unsent).toBe(0);
  });
});
