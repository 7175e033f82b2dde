import type { BigIntStats } from 'node:fs';
import {
  decodePathBytes,
  FsError,
  fsPathArg,
  type HostOs,
  isAbsoluteNative,
  joinPath,
  parentPath,
} from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { describeFileType } from './file-kind.js';
import { lstat, readlink, realpathBytes } from './fs-async.js';
import { notAFile } from './open-regular-file.js';
import { fromOsError, hasErrno } from './os-error.js';

/** The name a write will replace, and what is there now (null: nothing yet). */
export interface WriteTarget {
  /** The name written, as errors show it. */
  path: string;
  /** What the kernel is given for it when that differs (a re-rooted deep path, see deep-paths.ts). */
  access?: string;
  existing: BigIntStats | null;
}

export interface WriteTargetOptions {
  os: HostOs;
  /** Sandboxed: a symlink at the written name is refused, never followed. */
  refuseSymlinkLeaf: boolean;
}

// The kernel's own bound on symlink hops (Linux MAXSYMLINKS).
const MAX_LINK_HOPS = 40;

/**
 * Decides which name a write replaces. A symlink leaf is refused when sandboxed (symlink_escape);
 * otherwise it is followed to the file it names, as a plain write would, because the write itself
 * replaces a name by rename and would otherwise silently turn the link into a regular file.
 */
export async function resolveWriteTarget(path: string, options: WriteTargetOptions): Promise<WriteTarget> {
  let current = path;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    const stats = await lstatOrNull(current);
    if (stats === null) return { path: current, existing: null };
    if (!stats.isSymbolicLink()) {
      if (!stats.isFile()) throw notAFile(current, describeFileType(stats));
      return { path: current, existing: stats };
    }
    if (options.refuseSymlinkLeaf) {
      throw new FsError(
        'symlink_escape',
        `Refusing to write through the symbolic link at ${displayPath(current)}: a sandboxed write never follows a link at the written name`,
      );
    }
    current = await linkDestination(current, options.os);
  }
  throw new FsError('io_error', `Too many levels of symbolic links: ${displayPath(path)}`);
}

async function lstatOrNull(path: string): Promise<BigIntStats | null> {
  try {
    return await lstat(fsPathArg(path), { bigint: true });
  } catch (error) {
    if (hasErrno(error, 'ENOENT')) return null;
    throw fromOsError(error, path);
  }
}

/** Where the link at `link` points, with the link's directory resolved physically (as the kernel would). */
async function linkDestination(link: string, os: HostOs): Promise<string> {
  try {
    const target = decodePathBytes(await readlink(fsPathArg(link), { encoding: 'buffer' }));
    if (isAbsoluteNative(os, target)) return joinPath(os, target);
    const directory = parentPath(os, link) ?? link;
    const physical = decodePathBytes(await realpathBytes(fsPathArg(directory)));
    return joinPath(os, physical, target);
  } catch (error) {
    throw fromOsError(error, link);
  }
}

/** True when nothing (not even a dangling symlink) is at `path`. */
export async function nameIsFree(path: string): Promise<boolean> {
  return (await lstatOrNull(path)) === null;
}
