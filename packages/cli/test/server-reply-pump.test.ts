import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { encodeReply } from '../src/server/encode-reply.js';
import { COALESCED_BYTES, ReplyPump, type ReplySink } from '../src/server/reply-pump.js';
import type { RpcConnection } from '../src/server/rpc-connection.js';
import { serveStdio } from '../src/server/stdio-transport.js';

/** A sink that records each write; `room` false makes it ask the pump to wait until `giveRoom()`. */
function recordingSink() {
  const writes: Array<{ part: Buffer; last: boolean }> = [];
  let room = true;
  let waiting: (() => void) | null = null;
  let closed = false;
  const sink: ReplySink = {
    write(part, last) {
      writes.push({ part, last });
      return room;
    },
    waitForRoom: () =>
      new Promise<void>((resolve) => {
        waiting = resolve;
      }),
    get closed() {
      return closed;
    },
  };
  return {
    sink,
    writes,
    setRoom(value: boolean) {
      room = value;
    },
    giveRoom() {
      const wake = waiting;
      waiting = null;
      wake?.();
    },
    get waiting() {
      return waiting !== null;
    },
    close() {
      closed = true;
    },
  };
}

/** The parts of a reply as a generator that records which parts were pulled. */
function* pulled(parts: Buffer[], log: number[]): Generator<Buffer> {
  for (const [index, part] of parts.entries()) {
    log.push(index);
    yield part;
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ReplyPump', () => {
  it('writes a small reply of several parts as one write that ends the reply', async () => {
    const { sink, writes } = recordingSink();
    const pump = new ReplyPump(sink);
    const parts = encodeReply({ id: 'r', result: { dataBase64: Buffer.alloc(1024, 7), size: 1024 } });
    expect(parts.length).toBeGreaterThan(1);
    let written = false;
    pump.send(parts, () => {
      written = true;
    });
    await pump.whenIdle();
    expect(written).toBe(true);
    expect(writes).toHaveLength(1);
    expect(writes[0]?.last).toBe(true);
    expect(JSON.parse(writes[0]?.part.toString('utf8') ?? '')).toEqual({
      id: 'r',
      result: { dataBase64: Buffer.alloc(1024, 7).toString('base64'), size: 1024 },
    });
  });

  it('passes a large part on as it is, joining only the small parts around it', async () => {
    const { sink, writes } = recordingSink();
    const pump = new ReplyPump(sink);
    const large = Buffer.alloc(COALESCED_BYTES, 'a');
    const parts = [Buffer.from('{"x":"'), large, Buffer.from('"'), Buffer.from('}')];
    pump.send(parts, () => {});
    await pump.whenIdle();
    expect(writes.map(({ part, last }) => [part.length, last])).toEqual([
      [6, false],
      [COALESCED_BYTES, false],
      [2, true],
    ]);
    // Not copied: the sink gets the very buffer the encoder made.
    expect(writes[1]?.part).toBe(large);
    expect(Buffer.concat(writes.map(({ part }) => part)).toString()).toBe(
      `{"x":"${'a'.repeat(COALESCED_BYTES)}"}`,
    );
  });

  it('writes joined small parts once they reach the threshold, so a reply of many small parts stays bounded', async () => {
    const { sink, writes } = recordingSink();
    const pump = new ReplyPump(sink);
    const piece = Buffer.alloc(COALESCED_BYTES / 4, 'b');
    pump.send(
      Array.from({ length: 9 }, () => piece),
      () => {},
    );
    await pump.whenIdle();
    expect(writes.map(({ part, last }) => [part.length, last])).toEqual([
      [COALESCED_BYTES, false],
      [COALESCED_BYTES, false],
      [COALESCED_BYTES / 4, true],
    ]);
  });

  it('pulls no part beyond the one it looks ahead to while the sink has no room', async () => {
    const fake = recordingSink();
    const pump = new ReplyPump(fake.sink);
    const big = () => Buffer.alloc(COALESCED_BYTES, 'c');
    const log: number[] = [];
    fake.setRoom(false);
    pump.send(pulled([big(), big(), big(), Buffer.from('end')], log), () => {});
    await settle();
    expect(fake.waiting).toBe(true);
    expect(fake.writes).toHaveLength(1);
    expect(log).toEqual([0, 1]);
    fake.setRoom(true);
    fake.giveRoom();
    await pump.whenIdle();
    expect(log).toEqual([0, 1, 2, 3]);
    expect(fake.writes.map(({ part, last }) => [part.length, last])).toEqual([
      [COALESCED_BYTES, false],
      [COALESCED_BYTES, false],
      [COALESCED_BYTES, false],
      [3, true],
    ]);
  });

  it('stops a reply whose sink closed while it waited, and still reports it written', async () => {
    const fake = recordingSink();
    const pump = new ReplyPump(fake.sink);
    fake.setRoom(false);
    const calls: string[] = [];
    pump.send([Buffer.alloc(COALESCED_BYTES, 'd'), Buffer.from('tail')], () => calls.push('first'));
    pump.send([Buffer.from('{"id":2}')], () => calls.push('second'));
    await settle();
    fake.close();
    fake.giveRoom();
    await pump.whenIdle();
    expect(fake.writes).toHaveLength(1);
    expect(calls).toEqual(['first', 'second']);
  });
});

describe('the stdio transport', () => {
  it('writes a small reply and its newline to the output in one write', async () => {
    const chunks: Buffer[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
    });
    const input = new PassThrough();
    let send: ((parts: Buffer[]) => void) | null = null;
    const served = serveStdio(input, output, 1024, (pump) => {
      send = (parts) => pump.send(parts, () => {});
      return {
        receive() {},
        receiveOversized() {},
        drain: async () => {},
        close: async () => {},
      } as unknown as RpcConnection;
    });
    const reply = encodeReply({ id: 7, result: { dataBase64: Buffer.alloc(1024, 1) } });
    expect(reply.length).toBeGreaterThan(1);
    (send as unknown as (parts: Buffer[]) => void)(reply);
    await settle();
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.toString('utf8')).toBe(`${Buffer.concat(reply).toString('utf8')}\n`);
    input.end();
    await served;
  });
});
