import type { BigIntStats } from 'node:fs';
import { constants } from 'node:fs';
import {
  assertNotDeniedIdentity,
  currentHostOs,
  decodePathBytes,
  denialOf,
  FsError,
  fsPathArg,
  type PathGuard,
  PSEUDO_FILE_SYSTEMS,
} from '@fs-sandbox/policy/core';
import { DELETED_SUFFIX } from './directory-anchor.js';
import { displayPath } from './display-path.js';
import { describeFileType } from './file-kind.js';
import { type FileHandle, lstat, open, readlink, realpathBytes, statfs } from './fs-async.js';
import { fromOsError, hasErrno } from './os-error.js';

export interface RegularFile {
  handle: FileHandle;
  size: number;
  dev: bigint;
  ino: bigint;
  mode: number;
  /** fstat of the opened descriptor. */
  stats: BigIntStats;
}

export interface OpenRegularFileOptions {
  /** Refuse a symlink leaf (symlink_escape) instead of following it. */
  noFollow?: boolean;
  /**
   * Refuse a file the guard denies where it physically is, and another name (a hard link) of a
   * denied file: its identity is in the guard.
   */
  guard?: PathGuard | null;
  /** The name errors show when `path` is a descriptor-relative access path. */
  display?: string;
}

// O_NONBLOCK: opening a FIFO without a writer (or a tty, or some devices) would otherwise block
// the helper forever; with it the open returns at once and the fstat below refuses the file.
// O_NOCTTY: a terminal device must never become the helper's controlling terminal.
const BASE_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

export function notAFile(path: string, what: string): FsError {
  const kind = what === 'a directory' ? 'is_directory' : 'not_regular_file';
  return new FsError(kind, `path \`${displayPath(path)}\` is not a file: it is ${what}`);
}

/**
 * Opens `path` for reading only if it is a regular file on a real file system. The type is taken
 * from fstat of the opened descriptor, so a swap between a check and the open cannot make the
 * helper read a FIFO or device. The caller owns (and must close) the returned handle.
 */
export async function openRegularFile(
  path: string,
  options: OpenRegularFileOptions = {},
): Promise<RegularFile> {
  const shown = options.display ?? path;
  const flags = BASE_FLAGS | (options.noFollow ? constants.O_NOFOLLOW : 0);
  let handle: FileHandle;
  try {
    handle = await open(fsPathArg(path), flags);
  } catch (error) {
    throw await openFailure(error, path, shown, options);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notAFile(shown, describeFileType(stats));
    await refusePseudoFileSystem(handle, path, shown);
    assertNotDeniedIdentity(options.guard ?? null, stats, displayPath(shown));
    if (options.guard) await refuseDeniedLocation(handle, path, shown, options.guard);
    return {
      handle,
      size: Number(stats.size),
      dev: stats.dev,
      ino: stats.ino,
      mode: Number(stats.mode),
      stats,
    };
  } catch (error) {
    await handle.close();
    throw fromOsError(error, shown);
  }
}

async function openFailure(
  error: unknown,
  path: string,
  shown: string,
  options: OpenRegularFileOptions,
): Promise<unknown> {
  // EISDIR (directories on some platforms) and ENXIO (a unix socket) say the file exists but is
  // not readable as a file; name what it is instead of the bare errno.
  if (hasErrno(error, 'EISDIR', 'ENXIO')) {
    const stats = await lstat(fsPathArg(path)).catch(() => null);
    if (stats !== null) return notAFile(shown, describeFileType(stats));
  }
  return fromOsError(error, shown, { noFollow: options.noFollow === true });
}

/**
 * A denied path that did not exist when the sandbox was set up has no mask over it (bwrap cannot
 * mask a missing path without a placeholder on the host), and neither has a deny-glob match made
 * since: the kernel lets the read through. So before a byte is read, the opened file's physical
 * location is judged by the guard's deny rules: on Linux what the kernel reports for the
 * descriptor (no spelling, symlink or rename after the open can change it), elsewhere its realpath
 * (with the window a path-based check leaves).
 */
async function refuseDeniedLocation(
  handle: FileHandle,
  path: string,
  shown: string,
  guard: PathGuard,
): Promise<void> {
  if (guard.denyGlobs.length === 0 && !guard.entries.some((entry) => entry.reason === 'denied')) return;
  const os = currentHostOs();
  const reported =
    os === 'linux'
      ? await readlink(`/proc/self/fd/${handle.fd}`, { encoding: 'buffer' }).catch(() => null)
      : null;
  const resolved =
    reported ??
    (await realpathBytes(fsPathArg(path)).catch((error: unknown) => {
      // Deeper than PATH_MAX, or gone: where it is cannot be judged, so it is not read (fail closed).
      throw new FsError(
        'permission_denied',
        `cannot read ${displayPath(shown)}: its physical location cannot be checked against the deny rules (${(error as Error).message})`,
      );
    }));
  const located = decodePathBytes(resolved);
  const physical = located.endsWith(DELETED_SUFFIX) ? located.slice(0, -DELETED_SUFFIX.length) : located;
  const rule = denialOf(guard, physical, os);
  if (rule === null) return;
  const where = physical === shown ? '' : ` (it is ${displayPath(physical)})`;
  throw new FsError('permission_denied', `cannot read ${displayPath(shown)}${where}: ${rule}`);
}

async function refusePseudoFileSystem(handle: FileHandle, path: string, shown: string): Promise<void> {
  if (process.platform !== 'linux') return;
  // statfs of /proc/self/fd/N describes exactly the opened file, not whatever the path names now;
  // where /proc is not mounted, the path itself is the next best (and usually the same) answer.
  const info =
    (await statfs(`/proc/self/fd/${handle.fd}`).catch(() => null)) ??
    (await statfs(fsPathArg(path)).catch(() => null));
  const name = info === null ? undefined : PSEUDO_FILE_SYSTEMS.get(info.type);
  if (name !== undefined)
    throw notAFile(shown, `on the ${name} pseudo file system, not a regular file on disk`);
}
