import { readSync, writeSync } from 'node:fs';
import { binaryHeaderOf, ProtocolError, parseJsonLine } from './framing.js';
import { hasErrno } from './os-error.js';
import type { WireBinaryHeader } from './protocol.js';

/**
 * The program's stdin and stdout, with synchronous calls on the raw descriptors: process.stdin and
 * process.stdout would load the stream and net machinery on every start, and the helper has
 * nothing else to do while it waits anyway.
 */

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Node leaves inherited stdio blocking, but a descriptor marked non-blocking by whoever spawned us
 * answers EAGAIN instead of waiting; then wait a little and try again rather than fail.
 */
function retryingIo(action: () => number): number {
  for (;;) {
    try {
      return action();
    } catch (error) {
      if (!hasErrno(error, 'EAGAIN')) throw error;
      Atomics.wait(pause, 0, 0, 2);
    }
  }
}

function readInto(fd: number, buffer: Buffer, offset: number): number {
  return retryingIo(() => readSync(fd, buffer, offset, buffer.length - offset, null));
}

/**
 * Reads one request from `fd`: the JSON line, then exactly the announced binary bytes (allocated
 * once and read in place, so a large write is never copied), returned as the request's
 * `binary: {field, data}`. More than `limit` bytes, a short trailer, or anything after the request
 * in what was read is a protocol failure.
 *
 * The request ends where its framing ends, not at EOF (only a line without a newline, the Codex
 * form, runs to EOF). A broker's end of stdin reaches the helper one turn of the broker's event loop
 * after the bytes it wrote: waiting for it would cost every warm request a second wake-up, about
 * 0.4 ms here. Bytes the broker might send later are never read, so they cannot become a second
 * request; the helper answers one and exits.
 */
export function readRequest(fd: number, limit: number): Record<string, unknown> {
  const chunks: Buffer[] = [];
  let total = 0;
  let newlineAt = -1;
  while (newlineAt === -1) {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const count = readInto(fd, chunk, 0);
    if (count === 0) break;
    const piece = chunk.subarray(0, count);
    const index = piece.indexOf(NEWLINE);
    if (index !== -1) newlineAt = total + index;
    total += count;
    if (total > limit) throw new ProtocolError(`the request is larger than ${limit} bytes`);
    chunks.push(piece);
  }
  const head = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const { line, header, rest } = requestHead(head, newlineAt, limit);
  if (header === null) return line;
  const trailer = Buffer.allocUnsafe(header.length);
  rest.copy(trailer);
  for (let filled = rest.length; filled < trailer.length; ) {
    const count = readInto(fd, trailer, filled);
    if (count === 0) {
      throw new ProtocolError(`stdin ended after ${filled} of the ${header.length} announced binary bytes`);
    }
    filled += count;
  }
  return { ...line, binary: { field: header.field, data: trailer } };
}

/**
 * The request's JSON line and binary header from the bytes read up to its newline (at `newlineAt`,
 * or -1 when stdin ended without one), with the trailer bytes that came with them. Apart from
 * reading, the whole of taking a request in; the warm-up rehearses it on a request of its own.
 */
export function requestHead(
  head: Buffer,
  newlineAt: number,
  limit: number,
): { line: Record<string, unknown>; header: WireBinaryHeader | null; rest: Buffer } {
  const line = parseJsonLine(newlineAt === -1 ? head : head.subarray(0, newlineAt));
  const rest = newlineAt === -1 ? Buffer.alloc(0) : head.subarray(newlineAt + 1);
  const header = binaryHeaderOf(line);
  if (header === null) {
    requireOnlyWhitespace(rest);
    return { line, header, rest };
  }
  if (newlineAt + 1 + header.length > limit)
    throw new ProtocolError(`the request is larger than ${limit} bytes`);
  if (rest.length > header.length) throw new ProtocolError('unexpected bytes after the binary payload');
  return { line, header, rest };
}

function requireOnlyWhitespace(bytes: Buffer): void {
  if (bytes.toString('latin1').trim() !== '') throw new ProtocolError('unexpected bytes after the JSON line');
}

/** Writes every buffer completely to `fd`. */
export function writeAll(fd: number, buffers: Buffer[]): void {
  for (const buffer of buffers) {
    for (let offset = 0; offset < buffer.length; ) {
      offset += retryingIo(() => writeSync(fd, buffer, offset, buffer.length - offset));
    }
  }
}
