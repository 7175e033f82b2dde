import type { WireError } from '@fs-sandbox/policy';

/**
 * JSON-RPC message shapes as the Codex exec-server puts them on the wire: requests
 * may omit `"jsonrpc"`, replies always omit it, ids are strings or integers, and a message the
 * server cannot attribute to a request is answered with id -1.
 *
 * The framing and dispatch are written here rather than taken from a JSON-RPC library because the
 * replies must have the reference's byte shape: no `"jsonrpc"` member, `{"id","result"}` and
 * `{"error","id"}` key order, id -1 (not null) for unparsable input with the connection staying
 * usable, and the reference's exact messages. General libraries add `"jsonrpc":"2.0"`, answer parse
 * errors with id null, or frame with Content-Length headers; the whole of it is a few small files.
 */

export type RequestId = string | number;

/** The id the reference uses for replies to messages it could not parse. */
export const UNPARSABLE_ID = -1;

export type IncomingMessage =
  | { kind: 'request'; id: RequestId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown };

export interface SuccessReply {
  id: RequestId;
  result: unknown;
}

export interface ErrorReply {
  error: WireError;
  id: RequestId;
}

export type Reply = SuccessReply | ErrorReply;

/** Our own methods beside the filesystem ones. */
export const HANDSHAKE_METHODS = { initialize: 'initialize', initialized: 'initialized' } as const;
