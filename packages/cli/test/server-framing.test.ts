import { randomBytes } from 'node:crypto';
import { LineSplitter } from '@fs-sandbox/broker/internal';
import { decodedBase64Length } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { encodeReply } from '../src/server/encode-reply.js';
import { makeServer, readyClient, StdioClient } from './support/fake-server.js';

function collect(maxBytes: number) {
  const events: Array<string | number> = [];
  const splitter = new LineSplitter(maxBytes, {
    line: (bytes) => events.push(bytes.toString('utf8')),
    oversized: (bytes) => events.push(bytes),
  });
  return { events, splitter };
}

describe('LineSplitter', () => {
  it('splits across chunk boundaries and keeps a final line without newline', () => {
    const { events, splitter } = collect(100);
    splitter.push(Buffer.from('ab'));
    splitter.push(Buffer.from('c\nde'));
    splitter.push(Buffer.from('f\n\ngh'));
    splitter.end();
    expect(events).toEqual(['abc', 'def', 'gh']);
  });

  it('drops an oversized line as it streams and reports its size once, then goes on', () => {
    const { events, splitter } = collect(10);
    splitter.push(Buffer.from('ok\n0123456'));
    splitter.push(Buffer.from('789abcdef'));
    splitter.push(Buffer.from('ghij\nnext\n'));
    expect(events).toEqual(['ok', 20, 'next']);
  });

  it('accepts a line of exactly the limit', () => {
    const { events, splitter } = collect(4);
    splitter.push(Buffer.from('abcd\nabcde\n'));
    expect(events).toEqual(['abcd', 5]);
  });
});

describe('encodeReply', () => {
  it('writes Buffers as base64 strings, in place, without touching other strings', () => {
    const data = randomBytes(7 * 1024 * 1024 + 5);
    const tricky = '\u0000not-a-marker\u0000 "quoted" \\ ü';
    const parts = encodeReply({
      id: 'x',
      result: { dataBase64: data, note: tricky, list: [Buffer.from('ab'), 1] },
    });
    expect(parts.length).toBeGreaterThan(3);
    const parsed = JSON.parse(Buffer.concat(parts).toString('utf8'));
    expect(parsed).toEqual({
      id: 'x',
      result: { dataBase64: data.toString('base64'), note: tricky, list: ['YWI=', 1] },
    });
  });

  it('keeps the reference key order', () => {
    expect(Buffer.concat(encodeReply({ id: 3, result: {} })).toString()).toBe('{"id":3,"result":{}}');
    const error = { code: -32600, message: 'm', data: { errorKind: 'invalid_request' as const } };
    expect(Buffer.concat(encodeReply({ error, id: 3 })).toString()).toBe(
      '{"error":{"code":-32600,"message":"m","data":{"errorKind":"invalid_request"}},"id":3}',
    );
  });

  it('measures decoded base64 lengths', () => {
    for (const size of [0, 1, 2, 3, 4, 5, 100]) {
      expect(decodedBase64Length(randomBytes(size).toString('base64'))).toBe(size);
    }
  });
});

describe('message size limit on stdio', () => {
  it('answers an oversized line with an error for id -1 and serves the next line', async () => {
    const { client } = await readyClient({ maxMessageBytes: 1024 });
    client.send(`{"id":5,"method":"fs/readFile","params":{"path":"${'a'.repeat(4096)}"}}`);
    const reply = await client.replyFor(-1);
    expect(reply.error).toEqual({
      code: -32600,
      message: expect.stringMatching(/^JSON-RPC message of \d+ bytes exceeds the limit of 1024 bytes$/),
      data: { errorKind: 'invalid_request' },
    });
    expect((await client.request('fs/getMetadata', { path: 'file:///w/none' })).error?.code).toBe(-32004);
    await client.end();
  });

  it('handles a flood of oversized input without buffering it', async () => {
    const client = new StdioClient(makeServer({ maxMessageBytes: 64 * 1024 }).server);
    const block = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 32; i += 1) client.send(block);
    client.send('\n');
    const reply = await client.replyFor(-1);
    expect(reply.error?.message).toContain(`${32 * 1024 * 1024} bytes exceeds`);
    await client.end();
  });

  it('sends large binary results intact over stdio', async () => {
    const { client, broker } = await readyClient();
    const data = randomBytes(5 * 1024 * 1024);
    broker.files.set('file:///w/big', data);
    await client.request('fs/open', { handleId: 'b', path: 'file:///w/big' });
    const block = await client.request('fs/readBlock', { handleId: 'b', offset: 1024, len: 1024 * 1024 });
    expect(
      Buffer.from(String(block.result?.chunk), 'base64').equals(data.subarray(1024, 1024 + 1024 * 1024)),
    ).toBe(true);
    await client.end();
  });
});
