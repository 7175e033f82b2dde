import { type ErrorKind, FsError, isFsError } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';

/**
 * The one place where operating-system errors become typed FsErrors. Messages name the reason in
 * words and then the path (`No such file or directory: /w/nope.txt`), so a person can act on them
 * and a client can branch on `data.errorKind`.
 */

interface Reason {
  kind: ErrorKind;
  text: (path: string) => string;
}

const plain = (kind: ErrorKind, words: string): Reason => ({ kind, text: (path) => `${words}: ${path}` });

const REASONS: Record<string, Reason> = {
  ENOENT: plain('not_found', 'No such file or directory'),
  EACCES: plain('permission_denied', 'Permission denied'),
  EPERM: plain('permission_denied', 'Operation not permitted'),
  // The sandbox mounts everything outside the writable roots read-only, so EROFS is a denial of
  // the write, not a broken disk: report it as permission_denied and say why.
  EROFS: {
    kind: 'permission_denied',
    text: (path) => `Permission denied: ${path} is on a read-only file system`,
  },
  EISDIR: plain('is_directory', 'Is a directory'),
  ENOTDIR: plain('not_directory', 'Not a directory'),
  EEXIST: plain('already_exists', 'File exists'),
  ENOTEMPTY: plain('is_directory', 'Directory not empty'),
  ENOSPC: plain('io_error', 'No space left on device'),
  EDQUOT: plain('io_error', 'Disk quota exceeded'),
  EMFILE: plain('io_error', 'Too many open files in this process'),
  ENFILE: plain('io_error', 'Too many open files in the system'),
  EIO: plain('io_error', 'Input/output error'),
  EFBIG: plain('file_too_large', 'File too large'),
  ENAMETOOLONG: plain('invalid_params', 'File name too long'),
  ENXIO: plain('not_regular_file', 'No such device or address (a socket or a device with no driver)'),
  EXDEV: plain('io_error', 'Cannot move a file across file systems'),
  EBUSY: plain('io_error', 'Device or resource busy'),
  ETXTBSY: plain('io_error', 'Text file busy'),
  EAGAIN: plain('io_error', 'Resource temporarily unavailable'),
  EINVAL: plain('invalid_request', 'Invalid argument'),
  EBADF: plain('io_error', 'Bad file descriptor'),
  EMLINK: plain('io_error', 'Too many links'),
  ENOTSUP: plain('io_error', 'Operation not supported by this file system'),
  EOPNOTSUPP: plain('io_error', 'Operation not supported by this file system'),
  ELOOP: plain('io_error', 'Too many levels of symbolic links'),
};

export interface OsErrorOptions {
  /**
   * The leaf was opened with O_NOFOLLOW on purpose: ELOOP then means "the leaf is a symlink and
   * following it was refused", which is a symlink escape, not a link loop.
   */
  noFollow?: boolean;
}

function errnoCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

export function hasErrno(error: unknown, ...codes: string[]): boolean {
  const code = errnoCode(error);
  return code !== undefined && codes.includes(code);
}

/** Maps an fs error to an FsError naming `path`. FsErrors and non-OS errors pass through unchanged. */
export function fromOsError(error: unknown, path: string, options: OsErrorOptions = {}): unknown {
  if (isFsError(error)) return error;
  const code = errnoCode(error);
  // No instanceof: an error made in another realm (a vm context, another copy) maps the same.
  if (code === undefined) return error;
  const shown = displayPath(path);
  if (code === 'ELOOP' && options.noFollow) {
    return new FsError('symlink_escape', `Refusing to follow the symbolic link at ${shown}`);
  }
  const reason = REASONS[code];
  if (reason === undefined) return new FsError('io_error', `File system error ${code}: ${shown}`);
  return new FsError(reason.kind, reason.text(shown));
}
