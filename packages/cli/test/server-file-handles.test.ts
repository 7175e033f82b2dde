import { describe, expect, it } from 'vitest';
import { readyClient } from './support/fake-server.js';

const DIGITS = 'file:///w/digits.txt';

async function withDigits() {
  const setup = await readyClient();
  setup.broker.files.set(DIGITS, Buffer.from('0123456789'));
  return setup;
}

describe('read handles', () => {
  it('opens, reads positional blocks with the reference eof rule, and closes', async () => {
    const { client, broker } = await withDigits();
    expect(await client.request('fs/open', { handleId: 'h-1', path: DIGITS, sandbox: null }, 35)).toEqual({
      id: 35,
      result: { handleId: 'h-1' },
    });
    expect((await client.request('fs/readBlock', { handleId: 'h-1', offset: 6, len: 3 })).result).toEqual({
      chunk: 'Njc4',
      eof: false,
    });
    expect((await client.request('fs/readBlock', { handleId: 'h-1', offset: 8, len: 4 })).result).toEqual({
      chunk: 'ODk=',
      eof: true,
    });
    expect((await client.request('fs/readBlock', { handleId: 'h-1', offset: 10, len: 4 })).result).toEqual({
      chunk: '',
      eof: true,
    });
    expect((await client.request('fs/close', { handleId: 'h-1' })).result).toEqual({});
    expect(await client.request('fs/readBlock', { handleId: 'h-1', offset: 0, len: 1 }, 46)).toEqual({
      error: { code: -32004, message: 'unknown file handle `h-1`', data: { errorKind: 'not_found' } },
      id: 46,
    });
    // Every block read goes back through the broker with the handle's sandbox and file identity.
    const reads = broker.calls.filter((call) => call.method === 'fs/readRange');
    expect(reads[0]?.params).toEqual({
      path: DIGITS,
      offset: 6,
      len: 3,
      identity: { dev: '1', ino: '20' },
      sandbox: null,
    });
    await client.end();
  });

  it('keeps the sandbox of fs/open for every block read', async () => {
    const { client, broker } = await withDigits();
    const sandbox = {
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [{ path: { type: 'path', path: 'file:///w' }, access: 'read' }],
        },
      },
      windowsSandboxLevel: 'disabled',
    };
    await client.request('fs/open', { handleId: 'h', path: DIGITS, sandbox });
    await client.request('fs/readBlock', { handleId: 'h', offset: 0, len: 2 });
    expect(broker.calls.map((call) => (call.params as { sandbox: unknown }).sandbox)).toEqual([
      sandbox,
      sandbox,
    ]);
    await client.end();
  });

  it('refuses the 129th handle and frees a slot on close', async () => {
    const { client } = await withDigits();
    for (let i = 0; i < 128; i += 1) {
      expect((await client.request('fs/open', { handleId: `h${i}`, path: DIGITS })).result).toEqual({
        handleId: `h${i}`,
      });
    }
    expect(await client.request('fs/open', { handleId: 'h128', path: DIGITS }, 130)).toEqual({
      error: {
        code: -32600,
        message: 'at most 128 file handles may be open per connection',
        data: { errorKind: 'invalid_request' },
      },
      id: 130,
    });
    await client.request('fs/close', { handleId: 'h0' });
    expect((await client.request('fs/open', { handleId: 'h128', path: DIGITS })).result).toEqual({
      handleId: 'h128',
    });
    await client.end();
  });

  it('counts opens still running against the limit', async () => {
    const { client, broker } = await withDigits();
    for (let i = 0; i < 127; i += 1) await client.request('fs/open', { handleId: `h${i}`, path: DIGITS });
    const slow = 'file:///w/slow.txt';
    broker.files.set(slow, Buffer.from('s'));
    broker.holdPaths.add(slow);
    client.send(JSON.stringify({ id: 'slow', method: 'fs/open', params: { handleId: 'slow', path: slow } }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await client.request('fs/open', { handleId: 'extra', path: DIGITS })).error?.message).toBe(
      'at most 128 file handles may be open per connection',
    );
    broker.releaseAll();
    expect((await client.replyFor('slow')).result).toEqual({ handleId: 'slow' });
    await client.end();
  });

  it('answers a pipelined duplicate open after the first one, with "already exists"', async () => {
    const { client, broker } = await withDigits();
    broker.holdPaths.add(DIGITS);
    client.send(JSON.stringify({ id: 1, method: 'fs/open', params: { handleId: 'same', path: DIGITS } }));
    client.send(JSON.stringify({ id: 2, method: 'fs/open', params: { handleId: 'same', path: DIGITS } }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    broker.releaseAll();
    expect((await client.replyFor(1)).result).toEqual({ handleId: 'same' });
    expect((await client.replyFor(2)).error?.message).toBe('file handle `same` already exists');
    await client.end();
  });

  it('refuses duplicate ids, bad id lengths, bad block lengths and negative numbers', async () => {
    const { client } = await withDigits();
    await client.request('fs/open', { handleId: 'h-1', path: DIGITS });
    expect(await client.request('fs/open', { handleId: 'h-1', path: DIGITS }, 2)).toEqual({
      error: {
        code: -32600,
        message: 'file handle `h-1` already exists',
        data: { errorKind: 'invalid_request' },
      },
      id: 2,
    });
    for (const handleId of ['', 'x'.repeat(33), 'é'.repeat(17)]) {
      expect((await client.request('fs/open', { handleId, path: DIGITS })).error).toMatchObject({
        code: -32600,
        message: 'file handle id must be between 1 and 32 bytes',
      });
    }
    expect(
      (await client.request('fs/open', { handleId: 'x'.repeat(32), path: DIGITS })).result,
    ).toBeDefined();
    for (const len of [0, 1_048_577, 1_099_511_627_776]) {
      expect(await client.request('fs/readBlock', { handleId: 'h-1', offset: 0, len }, 41)).toEqual({
        error: {
          code: -32600,
          message: 'file read block length must be between 1 and 1048576',
          data: { errorKind: 'invalid_request' },
        },
        id: 41,
      });
    }
    expect(
      (await client.request('fs/readBlock', { handleId: 'h-1', offset: 0, len: 1_048_576 })).result,
    ).toBeDefined();
    expect(
      (await client.request('fs/readBlock', { handleId: 'h-1', offset: 0, len: -1 })).error,
    ).toMatchObject({
      code: -32602,
      message: 'invalid number',
    });
    expect(
      (await client.request('fs/readBlock', { handleId: 'h-1', offset: -5, len: 1 })).error,
    ).toMatchObject({
      code: -32602,
      message: 'invalid number',
    });
    expect((await client.request('fs/readBlock', { handleId: 'h-1', len: 1 })).error).toMatchObject({
      code: -32602,
      message: 'missing field `offset`',
    });
    expect(
      (await client.request('fs/readBlock', { handleId: 'h-1', offset: '0', len: 1 })).error,
    ).toMatchObject({
      code: -32602,
      message: 'invalid type: string "0", expected u64',
    });
    expect((await client.request('fs/open', { handleId: 'p' })).error).toMatchObject({
      code: -32602,
      message: 'missing field `path`',
    });
    await client.end();
  });

  it('refuses unknown keys on the handle methods before the broker is asked anything', async () => {
    const { client, broker } = await withDigits();
    const sandbox = { permissions: { type: 'disabled' } };
    expect(await client.request('fs/open', { handleId: 'h', path: DIGITS, sandBox: sandbox }, 7)).toEqual({
      error: {
        code: -32602,
        message: 'unknown field `sandBox` in fs/open params; did you mean `sandbox`?',
        data: { errorKind: 'invalid_params', field: 'sandBox' },
      },
      id: 7,
    });
    expect(broker.calls).toEqual([]);
    await client.request('fs/open', { handleId: 'h', path: DIGITS });
    expect(
      (await client.request('fs/readBlock', { handleId: 'h', offset: 0, length: 4 })).error,
    ).toMatchObject({
      code: -32602,
      message: 'unknown field `length` in fs/readBlock params, expected one of `handleId`, `offset`, `len`',
    });
    expect((await client.request('fs/close', { handleID: 'h' })).error).toMatchObject({
      code: -32602,
      message: 'unknown field `handleID` in fs/close params; did you mean `handleId`?',
    });
    expect(broker.calls.map((call) => call.method)).toEqual(['fs/openForRead']);
    await client.end();
  });

  it('answers unknown handles like the reference: readBlock -32004, close succeeds', async () => {
    const { client } = await withDigits();
    expect(
      await client.request('fs/readBlock', { handleId: 'no-such-handle', offset: 0, len: 4 }, 47),
    ).toEqual({
      error: {
        code: -32004,
        message: 'unknown file handle `no-such-handle`',
        data: { errorKind: 'not_found' },
      },
      id: 47,
    });
    expect(await client.request('fs/close', { handleId: 'no-such-handle' }, 48)).toEqual({
      id: 48,
      result: {},
    });
    await client.request('fs/open', { handleId: 'h', path: DIGITS });
    expect((await client.request('fs/close', { handleId: 'h' })).result).toEqual({});
    expect((await client.request('fs/close', { handleId: 'h' })).result).toEqual({});
    await client.end();
  });

  it('rejects unknown modes like serde', async () => {
    const { client, broker } = await withDigits();
    expect(
      (await client.request('fs/open', { handleId: 'w', path: DIGITS, mode: 'append' })).error,
    ).toMatchObject({
      code: -32602,
      message: 'unknown variant `append`, expected `read` or `replace`',
    });
    expect((await client.request('fs/open', { handleId: 'w', path: DIGITS, mode: 'read' })).result).toEqual({
      handleId: 'w',
    });
    expect(broker.calls).toHaveLength(1);
    await client.end();
  });

  it('closes a handle whose read failed, so its slot is free again', async () => {
    const { client, broker } = await withDigits();
    await client.request('fs/open', { handleId: 'h', path: DIGITS });
    broker.files.delete(DIGITS);
    expect((await client.request('fs/readBlock', { handleId: 'h', offset: 0, len: 1 })).error?.code).toBe(
      -32004,
    );
    broker.files.set(DIGITS, Buffer.from('x'));
    // Reopening the same id works: the failed read closed the old handle.
    expect((await client.request('fs/open', { handleId: 'h', path: DIGITS })).result).toEqual({
      handleId: 'h',
    });
    expect(client.server.stats().handles.open).toBe(1);
    await client.end();
    expect(client.server.stats().handles.open).toBe(0);
  });

  it('keeps the order of pipelined requests on one handle', async () => {
    const { client } = await withDigits();
    const lines = [
      { id: 1, method: 'fs/open', params: { handleId: 'p', path: DIGITS } },
      { id: 2, method: 'fs/readBlock', params: { handleId: 'p', offset: 0, len: 3 } },
      { id: 3, method: 'fs/close', params: { handleId: 'p' } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'p', offset: 0, len: 3 } },
    ];
    client.send(lines.map((line) => JSON.stringify(line)).join('\n'));
    expect((await client.replyFor(2)).result).toEqual({ chunk: 'MDEy', eof: false });
    expect((await client.replyFor(3)).result).toEqual({});
    expect((await client.replyFor(4)).error?.code).toBe(-32004);
    await client.end();
  });
});

describe('write handles', () => {
  const TARGET = 'file:///w/out.bin';
  const block = (text: string) => Buffer.from(text).toString('base64');

  it('stages blocks at their offsets and publishes them only on close', async () => {
    const { client, broker } = await readyClient();
    broker.files.set(TARGET, Buffer.from('old'));
    const sandbox = null;
    expect(
      (await client.request('fs/open', { handleId: 'w', path: TARGET, mode: 'replace', sandbox })).result,
    ).toEqual({ handleId: 'w' });
    expect(
      (await client.request('fs/writeBlock', { handleId: 'w', offset: 5, chunk: block('world') })).result,
    ).toEqual({});
    expect(
      (await client.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: block('hello') })).result,
    ).toEqual({});
    // Until the close, the file is what it was.
    expect(broker.files.get(TARGET)?.toString()).toBe('old');
    expect((await client.request('fs/close', { handleId: 'w' })).result).toEqual({});
    expect(broker.files.get(TARGET)?.toString()).toBe('helloworld');
    expect(broker.calls.map((call) => call.method)).toEqual([
      'fs/stageWrite',
      'fs/writeRange',
      'fs/writeRange',
      'fs/publishStaged',
    ]);
    // Every step names the staging file fs/stageWrite made, under the handle's sandbox.
    expect(broker.calls[1]?.params).toEqual({
      path: TARGET,
      staged: { name: '.fs-sandbox-0123456789abcdef01234567-1.tmp', dev: '1', ino: '7' },
      offset: 5,
      chunk: block('world'),
      sandbox: null,
    });
    await client.end();
  });

  it('answers a block of the wrong kind of handle as the reference does (EBADF)', async () => {
    const { client, broker } = await withDigits();
    broker.files.set(TARGET, Buffer.from('old'));
    await client.request('fs/open', { handleId: 'r', path: DIGITS });
    await client.request('fs/open', { handleId: 'w', path: TARGET, mode: 'replace' });
    const badDescriptor = {
      code: -32603,
      message: 'Bad file descriptor (os error 9)',
      data: { errorKind: 'io_error' },
    };
    expect((await client.request('fs/readBlock', { handleId: 'w', offset: 0, len: 1 })).error).toEqual(
      badDescriptor,
    );
    expect(
      (await client.request('fs/writeBlock', { handleId: 'r', offset: 0, chunk: block('x') })).error,
    ).toEqual(badDescriptor);
    expect(
      (await client.request('fs/writeBlock', { handleId: 'nope', offset: 0, chunk: block('x') })).error,
    ).toEqual({ code: -32004, message: 'unknown file handle `nope`', data: { errorKind: 'not_found' } });
    await client.end();
  });

  it('bounds a block before any helper runs', async () => {
    const { client, broker } = await readyClient();
    await client.request('fs/open', { handleId: 'w', path: TARGET, mode: 'replace' });
    const tooBig = Buffer.alloc(1024 * 1024 + 1).toString('base64');
    expect(
      (await client.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: tooBig })).error,
    ).toMatchObject({
      code: -32600,
      message: 'file write block length must be between 1 and 1048576',
    });
    expect(
      (await client.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: '' })).error,
    ).toMatchObject({
      code: -32600,
    });
    const farOffset = 16 * 1024 * 1024 * 1024;
    expect(
      (await client.request('fs/writeBlock', { handleId: 'w', offset: farOffset, chunk: block('x') })).error,
    ).toMatchObject({ code: -32600, data: { errorKind: 'file_too_large' } });
    expect(broker.calls.map((call) => call.method)).toEqual(['fs/stageWrite']);
    await client.end();
  });

  it('discards the staging file of a handle its connection never closed, and never publishes it', async () => {
    const { client, broker } = await readyClient();
    broker.files.set(TARGET, Buffer.from('old'));
    await client.request('fs/open', { handleId: 'w', path: TARGET, mode: 'replace' });
    await client.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: block('half') });
    await client.end();
    await expect.poll(() => broker.calls.at(-1)?.method).toBe('fs/discardStaged');
    expect(broker.files.get(TARGET)?.toString()).toBe('old');
    expect(broker.staging.size).toBe(0);
  });

  it('counts write handles against the per-connection limit', async () => {
    const { client } = await withDigits();
    for (let index = 0; index < 128; index++) {
      await client.request('fs/open', { handleId: `w${index}`, path: `${TARGET}${index}`, mode: 'replace' });
    }
    expect((await client.request('fs/open', { handleId: 'r', path: DIGITS })).error?.message).toBe(
      'at most 128 file handles may be open per connection',
    );
    await client.end();
  });

  it('answers the close of a handle whose block failed with that failure, never {}', async () => {
    const { client, broker } = await readyClient();
    broker.files.set(TARGET, Buffer.from('old'));
    await client.request('fs/open', { handleId: 'w', path: TARGET, mode: 'replace' });
    await client.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: block('one') });
    broker.failWrites.add(TARGET);
    expect(
      (await client.request('fs/writeBlock', { handleId: 'w', offset: 3, chunk: block('two') })).error,
    ).toMatchObject({
      data: { errorKind: 'permission_denied' },
    });
    const later = (await client.request('fs/writeBlock', { handleId: 'w', offset: 6, chunk: block('3') }))
      .error;
    expect(later).toMatchObject({ data: { errorKind: 'io_error' } });
    const closed = (await client.request('fs/close', { handleId: 'w' })).error;
    expect(closed?.message).toMatch(
      /^write handle `w` failed at an earlier block \(cannot write .*\[permission_denied\]\); nothing was published$/,
    );
    expect(broker.files.get(TARGET)?.toString()).toBe('old');
    // Once told, the id is free again, and a second close is the reference's idempotent {}.
    expect((await client.request('fs/close', { handleId: 'w' })).result).toEqual({});
    await client.end();
  });
});
