import type { HelperOperation, PathGuard, WireError } from '@fs-sandbox/policy/core';

/**
 * The helper protocol (broker <-> helper), as values. On the wire a request is one JSON line on
 * stdin, optionally followed by raw bytes that stand for one string field of `params` (binary
 * framing); a reply is one JSON line on stdout, for fs/readFile and fs/readRange followed by the raw
 * file bytes. In these in-memory forms the raw bytes travel as `binary.data` Buffers instead.
 */

/** One bound root the broker saw when it chose this helper: the helper refuses to act if its own view differs. */
export interface FreshnessEntry {
  /** Native absolute path. */
  path: string;
  /** Device and inode numbers as decimal strings (exact 64-bit values from a bigint stat). */
  dev: string;
  ino: string;
}

/** Raw bytes standing for `params[field]` (a writeFile's `dataBase64`), so large payloads are never base64-encoded. */
export interface RequestBinary {
  field: string;
  data: Uint8Array;
}

export interface HelperRequest {
  operation: string;
  params: Record<string, unknown>;
  freshness?: FreshnessEntry[];
  /** The write rules of a sandboxed request, checked on physical locations (see policy path-guard.ts). */
  guard?: PathGuard;
  /** Tag for the temporary files of this request (policy temp-tag.ts). */
  tempTag?: string;
  binary?: RequestBinary;
}

/** Reply fields that carry file bytes: `dataBase64` of fs/readFile, `chunk` of fs/readRange. */
export type ReplyBinaryField = 'dataBase64' | 'chunk';

export interface ReplyBinary {
  field: ReplyBinaryField;
  data: Buffer;
}

export interface HelperOkReply {
  status: 'ok';
  payload: { operation: HelperOperation; response: Record<string, unknown> };
  /** Present for fs/readFile and fs/readRange: `response[field]` is "" and these are the bytes it stands for. */
  binary?: ReplyBinary;
}

export interface HelperErrorReply {
  status: 'error';
  payload: WireError;
}

export type HelperReply = HelperOkReply | HelperErrorReply;

/** How the wire marks a binary trailer in the JSON line (request or reply). */
export interface WireBinaryHeader {
  field: string;
  length: number;
}
