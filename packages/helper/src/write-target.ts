import type { BigIntStats } from 'node:fs';
import {
  assertNotDeniedIdentity,
  assertWritable,
  decodePathBytes,
  FsError,
  fsPathArg,
  type HostOs,
  isAbsoluteNative,
  joinPath,
  type PathGuard,
} from '@fs-sandbox/policy/core';
import { type DirectoryAnchor, locateName } from './directory-anchor.js';
import { displayPath } from './display-path.js';
import { describeFileType } from './file-kind.js';
import { lstat, readlink } from './fs-async.js';
import { notAFile } from './open-regular-file.js';
import { fromOsError, hasErrno } from './os-error.js';
import { assertLocatedAllowed } from './surface-check.js';

/** The name a write will replace, and what is there now (null: nothing yet). */
export interface WriteTarget {
  /** The name written, as errors show it. */
  path: string;
  /** What the kernel is given for it when that differs (a name reached through its opened parent). */
  access?: string;
  existing: BigIntStats | null;
}

/** A write target reached through its opened parent, which the caller closes. */
export interface LocatedWriteTarget extends WriteTarget {
  access: string;
  parent: DirectoryAnchor;
}

export interface WriteTargetOptions {
  os: HostOs;
  /** Sandboxed: a symlink at the written name is refused, never followed. */
  refuseSymlinkLeaf: boolean;
  guard: PathGuard | null;
  /** The name must be free: anything there, even a dangling link, is `file_already_exists`. */
  createOnly?: boolean;
}

// The kernel's own bound on symlink hops (Linux MAXSYMLINKS).
const MAX_LINK_HOPS = 40;

/**
 * Decides which name a write replaces and checks the guard on its physical location. A symlink
 * leaf is refused when sandboxed (symlink_escape); otherwise it is followed to the file it names,
 * as a plain write would, because the write itself replaces a name by rename and would otherwise
 * silently turn the link into a regular file.
 */
export async function locateWriteTarget(
  path: string,
  options: WriteTargetOptions,
): Promise<LocatedWriteTarget> {
  let current = path;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    const located = await locateName(current, options.os);
    try {
      if (options.guard !== null) assertWritable(options.guard, located.physical, current, options.os);
      const stats = await lstatOrNull(located.access, current);
      assertLocatedAllowed(located, options.guard, stats === null ? 'create' : 'write', current, options.os);
      if (stats === null)
        return { path: current, access: located.access, existing: null, parent: located.parent };
      if (options.createOnly) {
        throw new FsError(
          'file_already_exists',
          `File already exists: ${displayPath(current)} (mode "create" never replaces a file)`,
        );
      }
      if (!stats.isSymbolicLink()) {
        if (!stats.isFile()) throw notAFile(current, describeFileType(stats));
        assertNotDeniedIdentity(options.guard, stats, displayPath(current));
        return { path: current, access: located.access, existing: stats, parent: located.parent };
      }
      if (options.refuseSymlinkLeaf) {
        throw new FsError(
          'symlink_escape',
          `Refusing to write through the symbolic link at ${displayPath(current)}: a sandboxed write never follows a link at the written name`,
        );
      }
      const next = await linkDestination(located.access, located.parent.physical, current, options.os);
      await located.parent.close();
      current = next;
    } catch (error) {
      await located.parent.close();
      throw error;
    }
  }
  throw new FsError('io_error', `Too many levels of symbolic links: ${displayPath(path)}`);
}

/** Runs `action` on the located target and closes its parent afterwards. */
export async function withWriteTarget<T>(
  path: string,
  options: WriteTargetOptions,
  action: (target: LocatedWriteTarget) => Promise<T>,
): Promise<T> {
  const target = await locateWriteTarget(path, options);
  try {
    return await action(target);
  } finally {
    await target.parent.close();
  }
}

/** lstat of a name (a link described, not followed), or null when nothing is there. */
export async function lstatOrNull(access: string, shown: string): Promise<BigIntStats | null> {
  try {
    return await lstat(fsPathArg(access), { bigint: true });
  } catch (error) {
    if (hasErrno(error, 'ENOENT')) return null;
    throw fromOsError(error, shown);
  }
}

/** Where the link points, relative links resolved against the link's physical directory (as the kernel would). */
async function linkDestination(
  access: string,
  directory: string,
  shown: string,
  os: HostOs,
): Promise<string> {
  try {
    const target = decodePathBytes(await readlink(fsPathArg(access), { encoding: 'buffer' }));
    return isAbsoluteNative(os, target) ? joinPath(os, target) : joinPath(os, directory, target);
  } catch (error) {
    throw fromOsError(error, shown);
  }
}
