import type { HelperMethod, HelperParamsOf, HelperResultOf } from '@fs-sandbox/policy';
import type { PathGuard, WireError } from '@fs-sandbox/policy/core';

/**
 * The helper protocol (broker <-> helper), as values. On the wire a request is one JSON line on
 * stdin, optionally followed by raw bytes that stand for the one bytes-valued field of `params`
 * (binary framing); a reply is one JSON line on stdout, for fs/readFile and fs/readRange followed by
 * the raw file bytes. In these in-memory forms the bytes stay in their field (request) or travel as
 * `binary.data` (reply). Params are the method table's (policy method-table.ts) as the broker
 * parsed them: native paths, decoded bytes, defaults applied; types only, so no schema is loaded.
 */

/** One bound root the broker saw when it chose this helper: the helper refuses to act if its own view differs. */
export interface FreshnessEntry {
  /** Native absolute path. */
  path: string;
  /** Device and inode numbers as decimal strings (exact 64-bit values from a bigint stat). */
  dev: string;
  ino: string;
}

export interface HelperRequest<M extends HelperMethod = HelperMethod> {
  operation: M;
  params: HelperParamsOf<M>;
  /**
   * The request runs under a restricted sandbox context: the helper then refuses to act without a
   * guard and never writes through a symlink leaf.
   */
  sandboxed?: boolean;
  freshness?: FreshnessEntry[];
  /** The write rules of a sandboxed request, checked on physical locations (see policy path-guard.ts). */
  guard?: PathGuard;
  /** Tag for the temporary files of this request (policy temp-tag.ts). */
  tempTag?: string;
  /**
   * The ripgrep executable fs/search and fs/glob run, as the helper sees it (the broker binds that
   * exact file into every sandbox at the same path). Absent: those methods are unavailable.
   */
  ripgrep?: string;
  /** Report the progress of a long tree operation on stderr (policy tree-progress.ts). */
  progress?: boolean;
}

/** Reply fields that carry file bytes: `dataBase64` of fs/readFile, `chunk` of fs/readRange. */
export type ReplyBinaryField = 'dataBase64' | 'chunk';

export interface ReplyBinary {
  field: ReplyBinaryField;
  data: Buffer;
}

export interface HelperOkReply<M extends HelperMethod = HelperMethod> {
  status: 'ok';
  payload: { operation: M; response: HelperResultOf<M> };
  /** Present for fs/readFile and fs/readRange: `response[field]` is "" and these are the bytes it stands for. */
  binary?: ReplyBinary;
}

export interface HelperErrorReply {
  status: 'error';
  payload: WireError;
}

export type HelperReply<M extends HelperMethod = HelperMethod> = HelperOkReply<M> | HelperErrorReply;

/** How the wire marks a binary trailer in the JSON line (request or reply). */
export interface WireBinaryHeader {
  field: string;
  length: number;
}
