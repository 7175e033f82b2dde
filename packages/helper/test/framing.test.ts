import { describe, expect, it } from 'vitest';
import { decodeReply, encodeReply, encodeRequest, ProtocolError } from '../src/framing.js';
import type { HelperReply } from '../src/protocol.js';

describe('helper protocol framing', () => {
  it('encodes a binary reply as a JSON line plus raw bytes, and decodes it back', () => {
    const data = Buffer.from([0, 10, 255]);
    const reply: HelperReply = {
      status: 'ok',
      payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
      binary: { field: 'dataBase64', data },
    };
    const wire = Buffer.concat(encodeReply(reply));
    const newline = wire.indexOf(10);
    expect(JSON.parse(wire.subarray(0, newline).toString())).toEqual({
      status: 'ok',
      payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
      binary: { field: 'dataBase64', length: 3 },
    });
    expect(wire.subarray(newline + 1).equals(data)).toBe(true);
    expect(decodeReply(wire)).toEqual(reply);
  });

  it('sends a small frame as one buffer (one write) and never copies large bytes', () => {
    const reply = (data: Buffer): HelperReply => ({
      status: 'ok',
      payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
      binary: { field: 'dataBase64', data },
    });
    const small = encodeReply(reply(Buffer.alloc(64 * 1024, 1)));
    expect(small).toHaveLength(1);
    expect(decodeReply(small[0] as Buffer).status).toBe('ok');
    const largeData = Buffer.alloc(64 * 1024 + 1, 2);
    const large = encodeReply(reply(largeData));
    expect(large).toHaveLength(2);
    expect(large[1]).toBe(largeData);
    const write = (bytes: number) =>
      encodeRequest({
        operation: 'fs/writeFile',
        params: { path: '/x', dataBase64: new Uint8Array(bytes), mode: 'overwrite' },
      });
    expect(write(1024)).toHaveLength(1);
    expect(write(64 * 1024 + 1)).toHaveLength(2);
  });

  it('encodes plain replies as one JSON line', () => {
    const reply: HelperReply = {
      status: 'error',
      payload: { code: -32004, message: 'No such file or directory: /x', data: { errorKind: 'not_found' } },
    };
    const wire = Buffer.concat(encodeReply(reply));
    expect(wire.toString()).toBe(`${JSON.stringify(reply)}\n`);
    expect(decodeReply(wire)).toEqual(reply);
  });

  it('encodes a request with its binary field after the line', () => {
    const wire = Buffer.concat(
      encodeRequest({
        operation: 'fs/writeFile',
        params: { path: '/x', dataBase64: new Uint8Array([1, 2]), mode: 'overwrite' },
      }),
    );
    expect(wire.toString('latin1')).toBe(
      '{"operation":"fs/writeFile","params":{"path":"/x","dataBase64":"","mode":"overwrite"},"binary":{"field":"dataBase64","length":2}}\n\u0001\u0002',
    );
  });

  it('refuses to encode a request with two binary fields (the framing carries one)', () => {
    const params = {
      path: '/x',
      dataBase64: new Uint8Array([1]),
      mode: 'overwrite',
      other: new Uint8Array([2]),
    };
    expect(() => encodeRequest({ operation: 'fs/writeFile', params } as never)).toThrow(ProtocolError);
  });

  it('refuses a trailer of the wrong length, trailing garbage and a binary field a reply cannot have', () => {
    const line = '{"status":"ok","payload":{},"binary":{"field":"chunk","length":4}}\n';
    expect(() => decodeReply(Buffer.from(`${line}abc`))).toThrow(ProtocolError);
    expect(() => decodeReply(Buffer.from(`${line}abcde`))).toThrow(ProtocolError);
    expect(() => decodeReply(Buffer.from('{"status":"ok"}\nxyz'))).toThrow(ProtocolError);
    expect(() => decodeReply(Buffer.from('{"status":"ok","binary":{"field":"path","length":0}}\n'))).toThrow(
      ProtocolError,
    );
    expect(() => decodeReply(Buffer.from('not json'))).toThrow(ProtocolError);
  });
});
