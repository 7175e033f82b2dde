/**
 * The closed set of error kinds (DESIGN §10). Every error that leaves the helper, the broker or the
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
  'symlink_escape',
  'protected_path',
  'sandbox_unavailable',
  'helper_failed',
  'timeout',
  'io_error',
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
  parseError: -32600,
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
  symlink_escape: RPC_CODES.invalidRequest,
  protected_path: RPC_CODES.invalidRequest,
  sandbox_unavailable: RPC_CODES.internalError,
  helper_failed: RPC_CODES.internalError,
  timeout: RPC_CODES.internalError,
  io_error: RPC_CODES.internalError,
  internal_error: RPC_CODES.internalError,
};

export function codeForErrorKind(kind: ErrorKind): number {
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
 * The one error type thrown by policy, helper and broker code. Boundaries turn it into a
 * `WireError` with `toWireError`; anything else that escapes is an `internal_error`.
 */
export class FsError extends Error {
  readonly kind: ErrorKind;
  readonly code: number;
  readonly extra: Record<string, unknown> | undefined;

  constructor(kind: ErrorKind, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.name = 'FsError';
    this.kind = kind;
    this.code = codeForErrorKind(kind);
    this.extra = extra;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message, data: { ...this.extra, errorKind: this.kind } };
  }
}

export function fsError(kind: ErrorKind, message: string, extra?: Record<string, unknown>): FsError {
  return new FsError(kind, message, extra);
}

/** Maps any thrown value to a wire error; unknown throwables become `internal_error`. */
export function toWireError(error: unknown): WireError {
  if (error instanceof FsError) return error.toWire();
  const message = error instanceof Error ? error.message : String(error);
  return { code: RPC_CODES.internalError, message, data: { errorKind: 'internal_error' } };
}
