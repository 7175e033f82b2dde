import { constants, existsSync } from 'node:fs';
import {
  decodePathBytes,
  FsError,
  fsPathArg,
  type HostOs,
  isFsError,
  joinPath,
  parentPath,
  splitNativePath,
} from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { type FileHandle, lstat, open, readlink, realpathBytes } from './fs-async.js';
import { fromOsError, hasErrno } from './os-error.js';

/**
 * An open directory that every change below it goes through. On Linux the directory is held by a
 * descriptor and its children are addressed as `/proc/self/fd/N/name`, which the kernel resolves
 * like openat(N, name): a rename or symlink swap of any ancestor after the directory was opened
 * cannot redirect the change, and the directory's physical location is what the kernel reports
 * for the descriptor (readlink of the magic link), not what the request spelled. That physical
 * location is what the path guard is asked about.
 *
 * Where there is no /proc (macOS, Windows) the anchor holds the path and its realpath: the same
 * physical check, with the window between check and use that a path-based API leaves.
 */
export interface DirectoryAnchor {
  /** Where the kernel says the directory is (native, absolute, symlinks resolved). */
  readonly physical: string;
  /** What to hand the kernel for the directory itself. */
  readonly access: string;
  /** What to hand the kernel for the entry `name` of this directory (the entry itself is not resolved). */
  child(name: string): string;
  /** Device and inode of the opened directory. */
  identity(): Promise<string>;
  close(): Promise<void>;
}

const PROC_FD = '/proc/self/fd';
let procFdUsable: boolean | undefined;

function useProcFd(os: HostOs): boolean {
  if (os !== 'linux') return false;
  procFdUsable ??= existsSync(PROC_FD);
  return procFdUsable;
}

export interface OpenDirectoryOptions {
  /** Refuse a symlink at the last component (tree walks: a swapped-in link is never entered). */
  noFollow?: boolean;
  /** The name errors show (default: `access`). */
  display?: string;
  /**
   * The directory's physical path, already known: it was opened as one name inside an opened
   * parent without following a link, so it is the parent's path plus that name. The kernel cannot
   * report it past PATH_MAX (a 5 000-level tree), so tree walks pass it instead of asking.
   */
  physical?: string;
}

/**
 * O_PATH (not exported by node's or Bun's `constants`; the same value on every Linux architecture
 * the helper is built for). An anchor names its directory for the paths below and asks its
 * location and identity, which need no right to read the directory: under Landlock a directory
 * beside a denied one cannot be listed (a listing there would reach the denied one too), and a
 * file must still be writable in it.
 */
const O_PATH = 0o10000000;

/** How the kernel marks the `/proc/self/fd/N` link of a file or directory removed after it was opened. */
export const DELETED_SUFFIX = ' (deleted)';

/** Opens the directory `access` names (following symlinks on the way unless `noFollow`). */
export async function openDirectory(
  access: string,
  os: HostOs,
  options: OpenDirectoryOptions = {},
): Promise<DirectoryAnchor> {
  const display = options.display ?? access;
  if (!useProcFd(os)) return await pathAnchor(access, display, os);
  let handle: FileHandle;
  try {
    handle = await openAnchor(access, options.noFollow === true);
  } catch (error) {
    throw fromOsError(error, display, { noFollow: options.noFollow === true });
  }
  try {
    const via = `${PROC_FD}/${handle.fd}`;
    const physical = options.physical ?? decodePathBytes(await readlink(via, { encoding: 'buffer' }));
    if (physical.endsWith(DELETED_SUFFIX) || !physical.startsWith('/')) {
      throw new FsError('not_found', `No such file or directory: ${displayPath(display)} (it was removed)`);
    }
    return {
      physical,
      access: via,
      child: (name) => `${via}/${name}`,
      identity: async () => {
        const stats = await handle.stat();
        return `${stats.dev}:${stats.ino}`;
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw fromOsError(error, display);
  }
}

/**
 * The descriptor of an anchor (listing it opens `/proc/self/fd/N` again, which is judged then).
 * O_PATH with O_NOFOLLOW answers ENOTDIR for a symlink at the leaf; the plain open it is retried
 * with tells a symlink (ELOOP: refused as one) from a file.
 */
async function openAnchor(access: string, noFollow: boolean): Promise<FileHandle> {
  const leaf = noFollow ? constants.O_NOFOLLOW : 0;
  try {
    return await open(fsPathArg(access), O_PATH | constants.O_DIRECTORY | leaf);
  } catch (error) {
    if (!noFollow || !hasErrno(error, 'ENOTDIR')) throw error;
    return await open(fsPathArg(access), constants.O_RDONLY | constants.O_DIRECTORY | leaf);
  }
}

async function pathAnchor(access: string, display: string, os: HostOs): Promise<DirectoryAnchor> {
  let physical: string;
  try {
    physical = decodePathBytes(await realpathBytes(fsPathArg(access)));
  } catch (error) {
    throw fromOsError(error, display);
  }
  return {
    physical,
    access,
    child: (name) => joinPath(os, access, name),
    identity: async () => {
      const stats = await lstat(fsPathArg(access), { bigint: true });
      return `${stats.dev}:${stats.ino}`;
    },
    close: async () => undefined,
  };
}

/** A name to be created, replaced or removed, reached through its opened parent directory. */
export interface LocatedName {
  parent: DirectoryAnchor;
  /** The last component, as the request spelled it. */
  name: string;
  /** The name's physical location: the parent's physical path plus the name (the name itself is not followed). */
  physical: string;
  /** What to hand the kernel for the name. */
  access: string;
}

/**
 * Opens the parent of `path` and says where the name physically is. The caller must close
 * `parent`. A missing parent is `not_found` naming it; the root itself has no parent to write in.
 */
export async function locateName(path: string, os: HostOs): Promise<LocatedName> {
  const parent = parentPath(os, path);
  const name = splitNativePath(os, path)?.segments.at(-1);
  if (parent === null || name === undefined) {
    throw new FsError('permission_denied', `cannot change ${displayPath(path)}: it is a file system root`);
  }
  let anchor: DirectoryAnchor;
  try {
    anchor = await openDirectory(parent, os, { display: parent });
  } catch (error) {
    if (isFsError(error) && error.kind === 'not_found') {
      throw new FsError(
        'not_found',
        `No such file or directory: ${displayPath(path)} (its parent directory ${displayPath(parent)} does not exist)`,
      );
    }
    throw error;
  }
  return { parent: anchor, name, physical: joinPath(os, anchor.physical, name), access: anchor.child(name) };
}

/** True for the errors that mean "this name is not (or no longer) a directory we may enter". */
export function isNotEnterable(error: unknown): boolean {
  return (
    hasErrno(error, 'ELOOP', 'ENOTDIR', 'ENOENT') ||
    (isFsError(error) &&
      (error.kind === 'symlink_escape' || error.kind === 'not_directory' || error.kind === 'not_found'))
  );
}
