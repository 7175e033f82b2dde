/**
 * The closed set of error kinds. Every error that leaves the helper, the broker or the
 * server carries exactly one of these in `data.errorKind`, so clients branch on a value rather than
 * on message text.
 */
export const ERROR_KINDS = [
  'not_found',
  'permission_denied',
  'invalid_request',
  'invalid_params',
  'file_too_large',
  'not_regular_file',
  'is_directory',
  'not_directory',
  'already_exists',
  'file_already_exists',
  'hash_mismatch',
  'text_not_found',
  'ambiguous_text_match',
  'binary_file',
  'no_change',
  'symlink_escape',
  'protected_path',
  'patch_parse_error',
  'patch_rejected',
  'patch_conflict',
  'untrusted_workspace',
  'sandbox_unavailable',
  'helper_failed',
  'timeout',
  'io_error',
  'connection_lost',
  'internal_error',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

/** JSON-RPC error codes used on the wire (the reference's codes, plus -32004 for not found). */
export const RPC_CODES = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  notFound: -32004,
} as const;

/**
 * One place that maps a kind to its JSON-RPC code. The reference answers limit and policy refusals
 * with -32600 (invalid request) and OS-level failures with -32603; we keep that split so existing
 * clients see the codes they already handle.
 */
const CODE_BY_KIND: Record<ErrorKind, number> = {
  not_found: RPC_CODES.notFound,
  permission_denied: RPC_CODES.invalidRequest,
  invalid_request: RPC_CODES.invalidRequest,
  invalid_params: RPC_CODES.invalidParams,
  file_too_large: RPC_CODES.invalidRequest,
  not_regular_file: RPC_CODES.invalidRequest,
  is_directory: RPC_CODES.invalidRequest,
  not_directory: RPC_CODES.invalidRequest,
  already_exists: RPC_CODES.invalidRequest,
  file_already_exists: RPC_CODES.invalidRequest,
  hash_mismatch: RPC_CODES.invalidRequest,
  text_not_found: RPC_CODES.invalidRequest,
  ambiguous_text_match: RPC_CODES.invalidRequest,
  binary_file: RPC_CODES.invalidRequest,
  no_change: RPC_CODES.invalidRequest,
  symlink_escape: RPC_CODES.invalidRequest,
  protected_path: RPC_CODES.invalidRequest,
  patch_parse_error: RPC_CODES.invalidParams,
  patch_rejected: RPC_CODES.invalidRequest,
  patch_conflict: RPC_CODES.invalidRequest,
  untrusted_workspace: RPC_CODES.invalidRequest,
  sandbox_unavailable: RPC_CODES.internalError,
  helper_failed: RPC_CODES.internalError,
  timeout: RPC_CODES.internalError,
  io_error: RPC_CODES.internalError,
  connection_lost: RPC_CODES.internalError,
  internal_error: RPC_CODES.internalError,
};

function codeForErrorKind(kind: ErrorKind): number {
  return CODE_BY_KIND[kind];
}

export function isErrorKind(value: unknown): value is ErrorKind {
  return typeof value === 'string' && (ERROR_KINDS as readonly string[]).includes(value);
}

/** The error object carried on the wire (JSON-RPC `error`, helper `payload` of a failed reply). */
export interface WireError {
  code: number;
  message: string;
  data: { errorKind: ErrorKind; [extra: string]: unknown };
}

/**
 * Marks FsError instances. The helper bundle, the broker bundle and the policy package's own two
 * entry points each carry a copy of this class, and a consumer may install two versions: an error
 * from another copy fails `instanceof` but carries this registry-wide symbol.
 */
const FS_ERROR_BRAND = Symbol.for('fs-sandbox.FsError');

/**
 * The one error type thrown by policy, helper and broker code. Recognise it with `isFsError`, not
 * `instanceof`; boundaries turn it into a `WireError` with `toWireError`, and anything else that
 * escapes is an `internal_error`.
 */
export class FsError extends Error {
  readonly kind: ErrorKind;
  readonly code: number;
  readonly extra: Record<string, unknown> | undefined;

  constructor(kind: ErrorKind, message: string, extra?: Record<string, unknown>) {
    super(message);
    // Non-enumerable, so spreading or serialising an error never copies the brand onto plain data.
    Object.defineProperty(this, FS_ERROR_BRAND, { value: true });
    this.name = 'FsError';
    this.kind = kind;
    this.code = codeForErrorKind(kind);
    this.extra = extra;
  }
}

/**
 * Whether `value` is an FsError from any copy of this package. The brand alone is not trusted: a
 * kind this copy does not know (a newer version's) would have no JSON-RPC code here, so such an
 * error counts as unrecognised and reaches the wire as `internal_error` with its message.
 */
export function isFsError(value: unknown): value is FsError {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as {
    [FS_ERROR_BRAND]?: unknown;
    kind?: unknown;
    message?: unknown;
    extra?: unknown;
  };
  return (
    candidate[FS_ERROR_BRAND] === true &&
    isErrorKind(candidate.kind) &&
    typeof candidate.message === 'string' &&
    (candidate.extra === undefined || (typeof candidate.extra === 'object' && candidate.extra !== null))
  );
}

/**
 * The one mapping from a thrown value to a wire error, for the helper, the broker, the server and
 * the CLI. The code comes from the kind, not from the error, so an error from another copy gets
 * this copy's codes. Anything that is not an FsError is a bug on our side: `internal_error` with
 * its message, never a stack trace.
 */
export function toWireError(error: unknown): WireError {
  if (isFsError(error)) {
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
