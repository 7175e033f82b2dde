import { codeForErrorKind, FsError, isErrorKind, RPC_CODES, type WireError } from '@fs-sandbox/policy';
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
 * The one place where anything thrown while serving a request becomes a JSON-RPC error object.
 * Every error leaves with the reference's code and a `data.errorKind` (DESIGN §10). A throwable that
 * is not an FsError is a bug on our side: the client gets `internal_error` with its message, never
 * a stack trace.
 */
export function toRpcError(error: unknown): WireError {
  if (error instanceof FsError) return error.toWire();
  if (error instanceof MethodNotFoundError) {
    return { code: RPC_CODES.methodNotFound, message: error.message, data: { errorKind: 'invalid_request' } };
  }
  // An FsError built by another copy of the policy module (the bundled CLI next to a source import)
  // fails instanceof but still carries a valid kind; keep its kind rather than calling it internal.
  if (isFsErrorLike(error)) {
    return {
      code: codeForErrorKind(error.kind),
      message: error.message,
      data: { ...error.extra, errorKind: error.kind },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: codeForErrorKind('internal_error'),
    message: `internal error: ${message}`,
    data: { errorKind: 'internal_error' },
  };
}

/** The kind an error will carry on the wire (for the audit log and the statistics). */
export function errorKindOf(error: unknown): WireError['data']['errorKind'] {
  return toRpcError(error).data.errorKind;
}

function isFsErrorLike(error: unknown): error is FsError {
  if (!(error instanceof Error)) return false;
  const candidate = error as Partial<FsError>;
  return isErrorKind(candidate.kind) && typeof candidate.message === 'string';
}
