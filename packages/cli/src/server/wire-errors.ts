import { RPC_CODES, toWireError, type WireError } from '@fs-sandbox/policy';
import { quoteBounded } from './parse-message.js';

/**
 * An unknown method. It is the one error whose code (-32601) no error kind maps to, so it gets its
 * own type; on the wire it still carries `errorKind: "invalid_request"`.
 */
export class MethodNotFoundError extends Error {
  constructor(method: string) {
    super(`fs-sandbox does not implement \`${quoteBounded(method)}\``);
    this.name = 'MethodNotFoundError';
  }
}

/**
 * Anything thrown while serving a request as a JSON-RPC error object: the policy package's mapping,
 * plus the one JSON-RPC code it has no kind for. A MethodNotFoundError is made and caught inside
 * the same server module graph, so `instanceof` cannot meet a second copy of it.
 */
export function toRpcError(error: unknown): WireError {
  if (error instanceof MethodNotFoundError) {
    return { code: RPC_CODES.methodNotFound, message: error.message, data: { errorKind: 'invalid_request' } };
  }
  return toWireError(error);
}
