import type { BigIntStats } from 'node:fs';
import {
  assertNotDeniedIdentity,
  childPath,
  type DirectorySurface,
  decodePathBytes,
  FsError,
  fsPathArg,
  type HostOs,
  isFsError,
  joinPath,
  LIMITS,
  type PathGuard,
  parentPath,
  pathStartsWith,
  splitNativePath,
  surfaceWithCreated,
} from '@fs-sandbox/policy/core';
import { atomicWrite } from '../atomic-write.js';
import { type DirectoryAnchor, locateName, openDirectory } from '../directory-anchor.js';
import { displayPath } from '../display-path.js';
import { describeFileType } from '../file-kind.js';
import { treeMountPoints } from '../freshness.js';
import {
  type FileHandle,
  link,
  lstat,
  mkdir,
  readlink,
  realpathBytes,
  rename,
  symlink,
  unlink,
} from '../fs-async.js';
import { openRegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { optionalBoolean, pathParam, requiredBoolean } from '../params.js';
import {
  assertLocatedAllowed,
  assertNotGitDirectory,
  assertSurfaceAllows,
  childSurface,
  directorySurface,
} from '../surface-check.js';
import { TEMP_NAME_ATTEMPTS, tempSiblingName } from '../temp-name.js';
import { type GuardScope, TreeGuard } from '../tree-guard.js';
import { type ProgressSink, progressCounter } from '../tree-progress-counter.js';
import { type TreeEntry, walkTree } from '../tree-walk.js';
import { type WriteTarget, withWriteTarget } from '../write-target.js';

export interface CopyOptions {
  os: HostOs;
  recursive: boolean;
  /** False: the destination must not exist when the copy lands there (claimed atomically, never replaced). */
  overwrite: boolean;
  sandboxed: boolean;
  guard: PathGuard | null;
  /** Told of each entry a tree copy checks, then copies. */
  progress?: ProgressSink | null;
}

const CHUNK_BYTES = 1024 * 1024;
// As for writeFile: setuid/setgid bits are not handed to a copy.
const KEPT_MODE_BITS = 0o1777;
// A sparse copy skips zeros in runs of this size (a multiple of every common file-system block).
const HOLE_GRANULE = 64 * 1024;
const EMPTY_GRANULE = Buffer.alloc(HOLE_GRANULE);

/**
 * Copies a regular file, a symlink (as a link, never followed) or, with `recursive`, a directory
 * tree. FIFOs, sockets and devices are refused as the source and skipped inside a tree: copying
 * one would block on it or read a device's endless stream (a denied file masked by the sandbox is
 * such a device, so it is skipped too). Every name the copy creates is checked by the guard on its
 * physical location; a tree is walked whole first, so a copy that would create a protected,
 * denied or read-only path, or write more than LIMITS.copyMaxBytes, is refused before anything
 * is created.
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
    await copyTree(source, destination, options);
    return;
  }
  if (!stats.isSymbolicLink() && !stats.isFile()) {
    throw new FsError(
      'not_regular_file',
      `fs/copy only supports regular files, directories, and symlinks: \`${displayPath(source)}\` is ${describeFileType(stats)}`,
    );
  }
  const budget = new ByteBudget(source);
  await withWriteTarget(
    destination,
    { os: options.os, refuseSymlinkLeaf: options.sandboxed, guard: options.guard },
    async (target) => {
      if (stats.isSymbolicLink()) await copySymlink(source, source, target, options.os, !options.overwrite);
      else await copyFile(source, source, target, options, budget, !options.overwrite);
    },
  );
}

/** Bytes a copy has allocated so far, against LIMITS.copyMaxBytes. */
class ByteBudget {
  private used = 0;

  constructor(private readonly what: string) {}

  spend(bytes: number): void {
    this.used += bytes;
    if (this.used > LIMITS.copyMaxBytes) {
      throw new FsError(
        'file_too_large',
        `cannot copy ${displayPath(this.what)}: it would write more than ${LIMITS.copyMaxBytes} bytes (fs/copy's limit)`,
      );
    }
  }
}

/** What a file will occupy once copied: its data, not its holes. */
function allocatedBytes(stats: BigIntStats): number {
  return Math.min(Number(stats.size), Number(stats.blocks) * 512);
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

/** Copies the regular file at `sourceAccess` into `target` (atomically, through a temp name). */
async function copyFile(
  sourceAccess: string,
  sourceDisplay: string,
  target: WriteTarget,
  options: CopyOptions,
  budget: ByteBudget,
  createOnly = false,
): Promise<void> {
  // O_NOFOLLOW: the source was seen as a regular file; if a symlink replaced it since, refuse.
  const from = await openRegularFile(sourceAccess, {
    noFollow: true,
    guard: options.guard,
    display: sourceDisplay,
  });
  try {
    const allocated = allocatedBytes(from.stats);
    budget.spend(allocated);
    const sparse = allocated < from.size;
    await atomicWrite(target, {
      os: options.os,
      createOnly,
      mode: from.mode & KEPT_MODE_BITS,
      durable: false,
      fill: (to) => copyData(from.handle, to, from.size, sparse),
    });
  } finally {
    await from.handle.close();
  }
}

/**
 * Copies `size` bytes. A sparse source keeps its holes: runs of zeros are skipped instead of
 * written and the length is set at the end, so a 4 GiB file with a few bytes of data does not
 * become 4 GiB on disk. Bytes past `size` (the file grew since it was measured) are not copied.
 */
async function copyData(from: FileHandle, to: FileHandle, size: number, sparse: boolean): Promise<void> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  while (position < size) {
    const { bytesRead } = await from.read(chunk, 0, Math.min(chunk.length, size - position), position);
    if (bytesRead === 0) break;
    if (!sparse) await to.writeAllAt(chunk.subarray(0, bytesRead), position);
    else {
      for (let offset = 0; offset < bytesRead; offset += HOLE_GRANULE) {
        const data = chunk.subarray(offset, Math.min(offset + HOLE_GRANULE, bytesRead));
        if (!data.equals(EMPTY_GRANULE.subarray(0, data.length)))
          await to.writeAllAt(data, position + offset);
      }
    }
    position += bytesRead;
  }
  if (sparse) await to.truncate(position);
}

/**
 * Recreates the link (its target bytes exactly) under a temp name, then renames it into place, or
 * with `createOnly` links it there: link(2) fails if the name exists at that instant.
 */
async function copySymlink(
  sourceAccess: string,
  sourceDisplay: string,
  target: WriteTarget,
  os: HostOs,
  createOnly = false,
): Promise<void> {
  const linkTarget = await readlink(fsPathArg(sourceAccess), { encoding: 'buffer' }).catch(
    (error: unknown) => {
      throw fromOsError(error, sourceDisplay);
    },
  );
  const name = target.access ?? target.path;
  const directory = parentPath(os, name) ?? name;
  for (let attempt = 0; attempt < TEMP_NAME_ATTEMPTS; attempt++) {
    const temp = joinPath(os, directory, tempSiblingName());
    try {
      await symlink(linkTarget, fsPathArg(temp));
    } catch (error) {
      if (hasErrno(error, 'EEXIST')) continue;
      throw fromOsError(error, target.path);
    }
    try {
      if (createOnly) {
        await link(fsPathArg(temp), fsPathArg(name));
        await unlink(fsPathArg(temp));
      } else await rename(fsPathArg(temp), fsPathArg(name));
      return;
    } catch (error) {
      await unlink(fsPathArg(temp)).catch(() => undefined);
      if (createOnly && hasErrno(error, 'EEXIST')) throw destinationExists(target.path);
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

function destinationExists(path: string): FsError {
  return new FsError(
    'file_already_exists',
    `${displayPath(path)} already exists: a copy with overwrite: false never replaces it`,
  );
}

/**
 * Creates a directory of the copy, or accepts an existing real directory (a copy merges into it),
 * unless `exclusive`: then the mkdir itself must create it.
 */
async function makeDirectory(
  access: string,
  path: string,
  os: HostOs,
  physical?: string,
  exclusive = false,
): Promise<DirectoryAnchor> {
  try {
    await mkdir(fsPathArg(access));
  } catch (error) {
    if (!hasErrno(error, 'EEXIST')) throw fromOsError(error, path);
    if (exclusive) throw destinationExists(path);
  }
  // A symlink at a directory's name is not merged into: files would land wherever it points.
  return await openDirectory(access, os, {
    noFollow: true,
    display: path,
    ...(physical === undefined ? {} : { physical }),
  }).catch((error: unknown) => {
    if (isFsError(error) && (error.kind === 'symlink_escape' || error.kind === 'not_directory')) {
      throw new FsError('already_exists', `${displayPath(path)} already exists and is not a directory`);
    }
    throw error;
  });
}

/** Where an entry of the source tree lands. */
interface Landing {
  /** Physical path of the destination directory (the survey's view). */
  physical: string;
  /** The destination directory as the request spells it. */
  display: string;
  guard: GuardScope;
  /** The opened destination directory (the copy pass only). */
  directory: DirectoryAnchor | null;
  /**
   * The executable surface's facts of the destination directory (the copy pass only, with a
   * guard), updated as the copy creates git directory markers in it (a merge could complete one).
   */
  surface: DirectorySurface | null;
}

function copiable(stats: BigIntStats): boolean {
  return stats.isFile() || stats.isSymbolicLink();
}

function tooMany(path: string): () => FsError {
  return () =>
    new FsError(
      'invalid_request',
      `cannot copy ${displayPath(path)}: it holds more than ${LIMITS.treeMaxEntries} entries; copy it in parts`,
    );
}

/**
 * Two walks of the source (tree-walk.ts: directories opened without following links): the first
 * checks every name the copy would create and adds up its bytes, touching nothing; the second
 * copies, checking each name again as it creates it. The copy's own destination is never descended
 * into even if it appears inside the source meanwhile, and a source directory seen twice on one
 * path (a looping bind mount) is copied once.
 */
async function copyTree(source: string, destination: string, options: CopyOptions): Promise<void> {
  const { os } = options;
  const sourceRoot = await openDirectory(source, os, { noFollow: true, display: source });
  const located = await locateName(destination, os).catch(async (error: unknown) => {
    await sourceRoot.close();
    throw error;
  });
  // Destination directories still open (closed on leave, or all at once if the copy fails).
  const open = new Set<DirectoryAnchor>();
  try {
    const guard = new TreeGuard(options.guard, os, located.physical, treeMountPoints());
    guard.check(located.physical, destination, 'create', { entries: true, globs: true });
    assertLocatedAllowed(located, options.guard, 'create', destination, os);
    // A tree laid out as a git directory is refused whole, before anything is created.
    assertNotGitDirectory(sourceRoot, source, os);
    const landing = (
      physical: string,
      display: string,
      directory: DirectoryAnchor | null,
      parent: Landing | null,
      surface: DirectorySurface | null = null,
    ): Landing => ({
      physical,
      display,
      guard: guard.scope(physical, parent?.guard ?? null),
      directory,
      surface,
    });
    const check = (parent: Landing, entry: TreeEntry): string => {
      const physical = childPath(os, parent.physical, entry.name);
      const display = childPath(os, parent.display, entry.name);
      guard.check(physical, display, 'create', parent.guard);
      if (parent.surface !== null) {
        assertSurfaceAllows(parent.surface, entry.name, 'create', display, os);
        parent.surface = surfaceWithCreated(parent.surface, entry.name);
      }
      return physical;
    };
    const walk = { os, maxEntries: LIMITS.treeMaxEntries, tooMany: tooMany(source), onLoop: 'skip' } as const;
    const planned = new ByteBudget(source);
    const checked = progressCounter(options.progress, 'checked');
    await walkTree(
      sourceRoot,
      source,
      landing(located.physical, destination, null, null),
      {
        async enter(parent, entry, from) {
          checked();
          assertNotGitDirectory(from, entry.display, os);
          return landing(check(parent, entry), childPath(os, parent.display, entry.name), null, parent);
        },
        async visit(parent, entry) {
          checked();
          if (!copiable(entry.stats)) return;
          check(parent, entry);
          assertNotDeniedIdentity(options.guard, entry.stats, displayPath(entry.display));
          if (entry.stats.isFile()) planned.spend(allocatedBytes(entry.stats));
        },
        async leave() {},
      },
      walk,
    );

    checked.total();
    const copyRoot = await makeDirectory(located.access, destination, os, undefined, !options.overwrite);
    open.add(copyRoot);
    const copyIdentity = await copyRoot.identity();
    const budget = new ByteBudget(source);
    const copied = progressCounter(options.progress, 'done');
    const rootSurface = options.guard === null ? null : directorySurface(copyRoot, options.guard, os);
    await walkTree(
      sourceRoot,
      source,
      landing(copyRoot.physical, destination, copyRoot, null, rootSurface),
      {
        async enter(parent, entry) {
          if (`${entry.stats.dev}:${entry.stats.ino}` === copyIdentity) return null;
          const physical = check(parent, entry);
          const display = childPath(os, parent.display, entry.name);
          const directory = await makeDirectory(
            (parent.directory as DirectoryAnchor).child(entry.name),
            display,
            os,
            physical,
          );
          open.add(directory);
          copied();
          const surface =
            parent.surface === null ? null : childSurface(parent.surface, entry.name, directory, os);
          return landing(physical, display, directory, parent, surface);
        },
        async visit(parent, entry, from) {
          copied();
          if (!copiable(entry.stats)) return;
          check(parent, entry);
          const target: WriteTarget = {
            path: childPath(os, parent.display, entry.name),
            access: (parent.directory as DirectoryAnchor).child(entry.name),
            existing: null,
          };
          if (entry.stats.isFile())
            await copyFile(from.child(entry.name), entry.display, target, options, budget);
          else await copySymlink(from.child(entry.name), entry.display, target, os);
        },
        async leave(context) {
          if (context.directory === null || context.directory === copyRoot) return;
          open.delete(context.directory);
          await context.directory.close();
        },
      },
      walk,
    );
  } finally {
    for (const directory of open) await directory.close();
    await located.parent.close();
    await sourceRoot.close();
  }
}

export const copyOperation: Operation<'fs/copy'> = {
  parse: (raw, os) => ({
    sourcePath: pathParam(raw, 'sourcePath', os),
    destinationPath: pathParam(raw, 'destinationPath', os),
    recursive: requiredBoolean(raw, 'recursive'),
    overwrite: optionalBoolean(raw, 'overwrite', true),
  }),
  async run({ sourcePath, destinationPath, recursive, overwrite }, context) {
    await copyAt(sourcePath, destinationPath, {
      os: context.os,
      recursive,
      overwrite,
      sandboxed: context.sandboxed,
      guard: context.guard,
      progress: context.progress,
    });
    return { response: {} };
  },
};
