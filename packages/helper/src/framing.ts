import { isPlainObject } from './params.js';
import type { HelperReply, HelperRequest, WireBinaryHeader } from './protocol.js';

/**
 * Byte framing of the helper protocol, both directions: one JSON line, then (when the line carries
 * `"binary":{"field","length"}`) exactly `length` raw bytes that stand for that field. The helper
 * program decodes requests (streaming, see stdio.ts) and encodes replies; the broker encodes
 * requests and decodes replies with the same code.
 */

/** The protocol itself failed (bad framing, oversized input): the program exits 1 instead of replying. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

const NEWLINE = 0x0a;
/**
 * A frame whose bytes are at most this many travels as one buffer: one write(2), so the reader
 * wakes once and gets it in one read (two writes cost a warm 1 KiB read ~0.3 ms, one wake-up of
 * each side more). Larger bytes stay a buffer of their own, never copied.
 */
const JOINED_MAX_BYTES = 64 * 1024;

/** The JSON line and its raw bytes, as one buffer when small enough to copy. */
function framed(line: Buffer, bytes: Buffer): Buffer[] {
  return bytes.length <= JOINED_MAX_BYTES ? [Buffer.concat([line, bytes])] : [line, bytes];
}

/** Reads the optional `binary` header of a JSON line; null when there is none. */
export function binaryHeaderOf(line: Record<string, unknown>): WireBinaryHeader | null {
  const binary = line.binary;
  if (binary === undefined) return null;
  if (
    !isPlainObject(binary) ||
    typeof binary.field !== 'string' ||
    typeof binary.length !== 'number' ||
    !Number.isSafeInteger(binary.length) ||
    binary.length < 0
  ) {
    throw new ProtocolError('`binary` must be {"field": string, "length": non-negative integer}');
  }
  return { field: binary.field, length: binary.length };
}

export function parseJsonLine(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    throw new ProtocolError(`the JSON line is not valid JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(value)) throw new ProtocolError('the JSON line must hold an object');
  return value;
}

function jsonLine(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
}

/** A reply as wire bytes: the JSON line, then the raw bytes of a binary field. */
export function encodeReply(reply: HelperReply): Buffer[] {
  if (reply.status === 'error' || reply.binary === undefined) {
    return [jsonLine({ status: reply.status, payload: reply.payload })];
  }
  const { field, data } = reply.binary;
  const line = jsonLine({
    status: 'ok',
    payload: reply.payload,
    binary: { field, length: data.length },
  });
  return framed(line, data);
}

/**
 * A request as wire bytes (broker side): the params' bytes-valued field (a write's content) travels
 * raw after the line, so large payloads are never base64-encoded. At most one field holds bytes.
 */
export function encodeRequest(request: HelperRequest): Buffer[] {
  const params = request.params as Record<string, unknown>;
  const binaryFields = Object.keys(params).filter((field) => params[field] instanceof Uint8Array);
  if (binaryFields.length === 0) return [jsonLine(request)];
  if (binaryFields.length > 1) throw new ProtocolError('a request can carry only one binary field');
  const field = binaryFields[0] as string;
  const bytes = params[field] as Uint8Array;
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const line = { ...request, params: { ...params, [field]: '' }, binary: { field, length: data.length } };
  return framed(jsonLine(line), data);
}

/** Splits complete wire bytes into the JSON line and the binary trailer it announces. */
function splitFrame(bytes: Buffer): { line: Record<string, unknown>; trailer: Buffer | null } {
  const end = bytes.indexOf(NEWLINE);
  const line = parseJsonLine(end === -1 ? bytes : bytes.subarray(0, end));
  const rest = end === -1 ? Buffer.alloc(0) : bytes.subarray(end + 1);
  const header = binaryHeaderOf(line);
  if (header === null) {
    if (rest.toString('latin1').trim() !== '')
      throw new ProtocolError('unexpected bytes after the JSON line');
    return { line, trailer: null };
  }
  if (rest.length !== header.length) {
    throw new ProtocolError(
      `the binary trailer is ${rest.length} bytes, the JSON line announced ${header.length}`,
    );
  }
  return { line, trailer: rest };
}

/** Wire bytes of a reply (broker side) back into a reply with Buffers for binary fields. */
export function decodeReply(bytes: Buffer): HelperReply {
  const { line, trailer } = splitFrame(bytes);
  const header = binaryHeaderOf(line);
  const { binary: _announced, ...reply } = line;
  if (header === null || trailer === null) return reply as unknown as HelperReply;
  if (header.field !== 'dataBase64' && header.field !== 'chunk') {
    throw new ProtocolError(`a reply cannot carry binary field \`${header.field}\``);
  }
  return {
    ...(reply as unknown as HelperReply & { status: 'ok' }),
    binary: { field: header.field, data: trailer },
  };
}
