import type { BigIntStats } from 'node:fs';
import {
  decodePathBytes,
  FsError,
  fsPathArg,
  type HostOs,
  joinPath,
  parentPath,
  pathStartsWith,
  splitNativePath,
} from '@fs-sandbox/policy/core';
import { atomicWrite } from '../atomic-write.js';
import { childPath } from '../child-path.js';
import { DeepPaths } from '../deep-paths.js';
import { displayPath } from '../display-path.js';
import { describeFileType } from '../file-kind.js';
import {
  type FileHandle,
  lstat,
  mkdir,
  readlink,
  realpathBytes,
  rename,
  symlink,
  unlink,
} from '../fs-async.js';
import { listDirectory } from '../list-directory.js';
import { openRegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam, requiredBoolean } from '../params.js';
import { TEMP_NAME_ATTEMPTS, tempSiblingName } from '../temp-name.js';
import { resolveWriteTarget, type WriteTarget } from '../write-target.js';

export interface CopyOptions {
  os: HostOs;
  recursive: boolean;
  sandboxed: boolean;
}

const CHUNK_BYTES = 1024 * 1024;
// As for writeFile: setuid/setgid bits are not handed to a copy.
const KEPT_MODE_BITS = 0o1777;
const EVERYTHING = Number.MAX_SAFE_INTEGER;

/**
 * Copies a regular file, a symlink (as a link, never followed) or, with `recursive`, a directory
 * tree. FIFOs, sockets and devices are refused as the source and skipped inside a tree: copying
 * one would block on it or read a device's endless stream.
 */
export async function copyAt(source: string, destination: string, options: CopyOptions): Promise<void> {
  const stats = await lstat(fsPathArg(source), { bigint: true }).catch((error: unknown) => {
    throw fromOsError(error, source);
  });
  if (stats.isDirectory()) {
    if (!options.recursive) {
      throw new FsError('invalid_request', 'fs/copy requires recursive: true when sourcePath is a directory');
    }
    await refuseCopyIntoItself(source, destination, options.os);
    await copyTree(source, destination, options.os);
    return;
  }
  if (stats.isSymbolicLink()) {
    await copySymlink(source, await topLevelTarget(destination, options), options.os);
    return;
  }
  if (stats.isFile()) {
    await copyFile(source, await topLevelTarget(destination, options), options.os);
    return;
  }
  throw new FsError(
    'not_regular_file',
    `fs/copy only supports regular files, directories, and symlinks: \`${displayPath(source)}\` is ${describeFileType(stats)}`,
  );
}

/** The destination name of a single-item copy: as for writeFile, a sandboxed copy never writes through a symlink leaf. */
function topLevelTarget(destination: string, options: CopyOptions): Promise<WriteTarget> {
  return resolveWriteTarget(destination, { os: options.os, refuseSymlinkLeaf: options.sandboxed });
}

/**
 * Both sides are resolved physically (the destination through its longest existing prefix), so a
 * symlinked or `..`-spelled destination inside the source is caught too; otherwise the copy would
 * feed on its own output.
 */
async function refuseCopyIntoItself(source: string, destination: string, os: HostOs): Promise<void> {
  const realSource = await physicalPath(source, os);
  const realDestination = await physicalPath(destination, os);
  if (pathStartsWith(os, realDestination, realSource)) {
    throw new FsError(
      'invalid_request',
      `fs/copy cannot copy a directory to itself or one of its descendants: ${displayPath(destination)} is inside ${displayPath(source)}`,
    );
  }
}

async function physicalPath(path: string, os: HostOs): Promise<string> {
  const missing: string[] = [];
  for (let current: string | null = path; current !== null; current = parentPath(os, current)) {
    try {
      const real = decodePathBytes(await realpathBytes(fsPathArg(current)));
      return missing.length === 0 ? real : joinPath(os, real, ...missing.reverse());
    } catch (error) {
      if (!hasErrno(error, 'ENOENT')) throw fromOsError(error, current);
      const segments = splitNativePath(os, current)?.segments ?? [];
      missing.push(segments.at(-1) ?? '');
    }
  }
  return path;
}

async function copyFile(sourceAccess: string, target: WriteTarget, os: HostOs): Promise<void> {
  // O_NOFOLLOW: the source was seen as a regular file; if a symlink replaced it since, refuse.
  const from = await openRegularFile(sourceAccess, { noFollow: true });
  try {
    await atomicWrite(target, {
      os,
      createOnly: false,
      mode: from.mode & KEPT_MODE_BITS,
      durable: false,
      fill: (to) => copyData(from.handle, to),
    });
  } finally {
    await from.handle.close();
  }
}

async function copyData(from: FileHandle, to: FileHandle): Promise<void> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let position = 0; ; ) {
    const { bytesRead } = await from.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) return;
    await to.writeAll(chunk.subarray(0, bytesRead));
    position += bytesRead;
  }
}

/** Recreates the link (its target bytes exactly) under a temp name, then renames it into place. */
async function copySymlink(
  source: string,
  target: WriteTarget,
  os: HostOs,
  sourceAccess: string = source,
): Promise<void> {
  const linkTarget = await readlink(fsPathArg(sourceAccess), { encoding: 'buffer' }).catch(
    (error: unknown) => {
      throw fromOsError(error, source);
    },
  );
  const name = target.access ?? target.path;
  const directory = parentPath(os, name) ?? name;
  for (let attempt = 0; attempt < TEMP_NAME_ATTEMPTS; attempt++) {
    const temp = tempSiblingName(os, directory);
    try {
      await symlink(linkTarget, fsPathArg(temp));
    } catch (error) {
      if (hasErrno(error, 'EEXIST')) continue;
      throw fromOsError(error, target.path);
    }
    try {
      await rename(fsPathArg(temp), fsPathArg(name));
      return;
    } catch (error) {
      await unlink(fsPathArg(temp)).catch(() => undefined);
      if (hasErrno(error, 'EISDIR', 'ENOTEMPTY', 'EEXIST')) {
        throw new FsError(
          'is_directory',
          `path \`${displayPath(target.path)}\` is a directory; a link cannot replace it`,
        );
      }
      throw fromOsError(error, target.path);
    }
  }
  throw new FsError('io_error', `Could not create a temporary link next to ${displayPath(target.path)}`);
}

/** Creates a directory of the copy, or accepts an existing real directory (a copy merges into it). */
async function makeDirectory(path: string, access: string): Promise<BigIntStats> {
  try {
    await mkdir(fsPathArg(access));
  } catch (error) {
    if (!hasErrno(error, 'EEXIST')) throw fromOsError(error, path);
  }
  const stats = await lstat(fsPathArg(access), { bigint: true }).catch((error: unknown) => {
    throw fromOsError(error, path);
  });
  // A symlink at a directory's name is not merged into: files would land wherever it points.
  if (!stats.isDirectory()) {
    throw new FsError('already_exists', `${displayPath(path)} already exists and is not a directory`);
  }
  return stats;
}

interface PendingCopy {
  source: string;
  destination: string;
}

/**
 * Depth-first and iterative, so a 5 000-level tree needs no call stack; deep paths are re-rooted on
 * both sides (deep-paths.ts). The copy's own root is never descended into even if it appears
 * inside the source after the check (a race), and a source directory seen twice (a looping bind
 * mount) is copied once.
 */
async function copyTree(sourceRoot: string, destinationRoot: string, os: HostOs): Promise<void> {
  const sources = new DeepPaths(os);
  const destinations = new DeepPaths(os);
  const copyRoot = await makeDirectory(destinationRoot, destinationRoot);
  const copyIdentity = `${copyRoot.dev}:${copyRoot.ino}`;
  const rootStats = await lstat(fsPathArg(sourceRoot), { bigint: true }).catch((error: unknown) => {
    throw fromOsError(error, sourceRoot);
  });
  const seen = new Set([`${rootStats.dev}:${rootStats.ino}`]);
  const stack: PendingCopy[] = [{ source: sourceRoot, destination: destinationRoot }];
  try {
    for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
      const sourceAccess = await sources.reach(item.source);
      const destinationAccess = await destinations.reach(item.destination);
      if (item.source !== sourceRoot) await makeDirectory(item.destination, destinationAccess);
      const listing = await listDirectory(item.source, EVERYTHING, sourceAccess);
      for (const entry of listing.entries) {
        const source = childPath(os, item.source, entry.name);
        const destination = childPath(os, item.destination, entry.name);
        const childAccess = await sources.reach(source);
        const stats = await lstat(fsPathArg(childAccess), { bigint: true }).catch((error: unknown) => {
          // Removed while we copy: there is nothing left to copy.
          if (hasErrno(error, 'ENOENT')) return null;
          throw fromOsError(error, source);
        });
        if (stats === null) continue;
        if (stats.isDirectory()) {
          const identity = `${stats.dev}:${stats.ino}`;
          if (identity === copyIdentity || seen.has(identity)) continue;
          seen.add(identity);
          stack.push({ source, destination });
          continue;
        }
        if (!stats.isFile() && !stats.isSymbolicLink()) continue;
        const target: WriteTarget = {
          path: destination,
          access: await destinations.reach(destination),
          existing: null,
        };
        if (stats.isFile()) await copyFile(childAccess, target, os);
        else await copySymlink(source, target, os, childAccess);
      }
    }
  } finally {
    await sources.close();
    await destinations.close();
  }
}

export const copyOperation: Operation = {
  async run(params, context) {
    const source = pathParam(params, 'sourcePath', context.os);
    const destination = pathParam(params, 'destinationPath', context.os);
    const recursive = requiredBoolean(params, 'recursive');
    await copyAt(source, destination, { os: context.os, recursive, sandboxed: context.sandboxed });
    return { response: {} };
  },
};
