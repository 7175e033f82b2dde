import {
  carriesRequests,
  FsError,
  type HelperMethod,
  innerRequestsOf,
  isHelperMethod,
  isWriteClassMethod,
} from '@fs-sandbox/policy';
import type { ParsedRequest } from './parsed-request.js';

/**
 * The trust gate of an untrusted workspace (`trusted: false`, `serve --untrusted`): every method
 * that creates, replaces or removes a path (the method table's access for its paths) is refused
 * before any helper runs, and so is a batch holding one, and every command (process/start). Reads
 * are unaffected.
 */
export function assertTrusted(request: ParsedRequest): void {
  const writing = writeClassOf(request);
  if (writing === null) return;
  throw new FsError(
    'untrusted_workspace',
    `refused: ${writing} changes files, and this broker runs for an untrusted workspace (only reads are allowed until it is trusted)`,
  );
}

/**
 * A command can change any file its sandbox makes writable (or, without a sandbox, any file the
 * broker's user can), and what it will do cannot be judged from its argv: an untrusted broker
 * starts none.
 */
export function untrustedCommand(): FsError {
  return new FsError(
    'untrusted_workspace',
    'refused: process/start runs a command, which can change files, and this broker runs for an untrusted workspace (only reads are allowed until it is trusted)',
  );
}

function writeClassOf(request: ParsedRequest): HelperMethod | null {
  if (!carriesRequests(request.method)) return isWriteClassMethod(request.method) ? request.method : null;
  const writing = innerRequestsOf(request.method, request.helper.params).find(
    (inner) => isHelperMethod(inner.method) && isWriteClassMethod(inner.method),
  );
  return writing === undefined ? null : (writing.method as HelperMethod);
}
