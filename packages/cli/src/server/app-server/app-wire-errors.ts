import { type ErrorKind, RPC_CODES, type WireError } from '@fs-sandbox/policy';
import { toRpcError } from '../wire-errors.js';

/**
 * Errors as the app-server writes them. The reference answers a request it cannot parse or will not
 * do with -32600, a bad value it checks itself with -32602, and whatever the OS refused (a missing
 * file, an existing directory, a name that is a directory) with -32603 and the OS's words; the
 * exec-server's own split (-32004 for not found, -32600 for the other OS refusals) is not this
 * wire's. Policy refusals, which the reference has none of, stay -32600 (it will not do them). The
 * typed kind still travels in `data.errorKind`, a field the reference's clients ignore.
 */
const OS_REFUSALS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'not_found',
  'is_directory',
  'not_directory',
  'already_exists',
  'file_already_exists',
  'io_error',
]);

/**
 * An error whose code on this wire is not its kind's: the reference refuses to read a directory as
 * a request it will not do (-32600, "is not a file") but to write over one as the OS's refusal.
 */
export class RecodedError {
  constructor(
    readonly error: unknown,
    readonly code: number,
  ) {}
}

export function appWireError(error: unknown): WireError {
  if (error instanceof RecodedError) return { ...toRpcError(error.error), code: error.code };
  const wire = toRpcError(error);
  if (OS_REFUSALS.has(wire.data.errorKind)) return { ...wire, code: RPC_CODES.internalError };
  return wire;
}
