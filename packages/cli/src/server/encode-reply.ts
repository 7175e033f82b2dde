import { randomBytes } from 'node:crypto';
import type { Reply } from './rpc-messages.js';

// A multiple of 3 so each slice encodes to base64 without padding in the middle of the stream.
const BASE64_SLICE_BYTES = 3 * 1024 * 1024;

export interface EncodedReply {
  parts: Iterable<Buffer>;
  /** Memory the reply holds until its parts have been pulled: its JSON text and its binary values. */
  bytes: number;
}

/**
 * Serialises a reply to UTF-8 parts (no trailing newline). Binary values (Buffers the broker keeps
 * for fs/readFile and fs/readBlock) are written as base64 strings slice by slice: the base64 of a
 * 512 MiB file is ~716 Mi characters, more than a V8 string can hold, so it must never be built as
 * one string. Everything else goes through JSON.stringify, which keeps the reference's key order
 * (`{"id","result"}` / `{"error","id"}`) because replies are built in that order.
 *
 * The parts are produced lazily, one base64 slice at a time, so a transport that writes them as
 * its peer reads holds a few MiB of encoded text at once, not the whole reply (the raw Buffer is
 * the only copy of the data).
 */
export function encodeReplyParts(reply: Reply): EncodedReply {
  const binaries: Uint8Array[] = [];
  // The marker embeds a fresh random nonce, so no string a client or file supplies can imitate it.
  const nonce = randomBytes(12).toString('hex');
  const marker = (index: number) => `\u0000${nonce}:${index}\u0000`;
  // Serialised now, so a result that cannot be serialised fails here, before anything is sent.
  const json = JSON.stringify(withMarkers(reply, binaries, marker));
  if (binaries.length === 0) {
    const whole = Buffer.from(json, 'utf8');
    return { parts: [whole], bytes: whole.length };
  }
  const bytes = binaries.reduce((sum, binary) => sum + binary.byteLength, json.length);
  const located = binaries
    .map((binary, index) => {
      const token = JSON.stringify(marker(index));
      return { binary, token, at: json.indexOf(token) };
    })
    .sort((a, b) => a.at - b.at);
  return { parts: spliceBinaries(json, located), bytes };
}

function* spliceBinaries(
  json: string,
  located: Array<{ binary: Uint8Array; token: string; at: number }>,
): Generator<Buffer> {
  let cursor = 0;
  for (const { binary, token, at } of located) {
    yield Buffer.from(`${json.slice(cursor, at)}"`, 'utf8');
    for (let offset = 0; offset < binary.byteLength; offset += BASE64_SLICE_BYTES) {
      const slice = Buffer.from(
        binary.buffer,
        binary.byteOffset + offset,
        Math.min(BASE64_SLICE_BYTES, binary.byteLength - offset),
      );
      yield Buffer.from(slice.toString('base64'), 'latin1');
    }
    yield Buffer.from('"', 'utf8');
    cursor = at + token.length;
  }
  yield Buffer.from(json.slice(cursor), 'utf8');
}

/** The whole reply at once (small replies, tests). */
export function encodeReply(reply: Reply): Buffer[] {
  return [...encodeReplyParts(reply).parts];
}

function withMarkers(value: unknown, binaries: Uint8Array[], marker: (index: number) => string): unknown {
  if (value instanceof Uint8Array) {
    binaries.push(value);
    return marker(binaries.length - 1);
  }
  if (Array.isArray(value)) return value.map((item) => withMarkers(item, binaries, marker));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = withMarkers(item, binaries, marker);
    return copy;
  }
  return value;
}
