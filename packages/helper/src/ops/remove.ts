import {
  assertWritable,
  childPath,
  type DirectorySurface,
  decideWrite,
  FsError,
  fsPathArg,
  type HostOs,
  isFsError,
  LIMITS,
  normalizeNativePath,
  type PathGuard,
  parentPath,
  samePath,
} from '@fs-sandbox/policy/core';
import { type DirectoryAnchor, type LocatedName, locateName, openDirectory } from '../directory-anchor.js';
import { displayPath } from '../display-path.js';
import { treeMountPoints } from '../freshness.js';
import { lstat, rmdir, stat, unlink } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam, requiredBoolean } from '../params.js';
import {
  assertLocatedAllowed,
  assertSurfaceAllows,
  childSurface,
  directorySurface,
} from '../surface-check.js';
import { type GuardScope, TreeGuard } from '../tree-guard.js';
import { type ProgressSink, progressCounter } from '../tree-progress-counter.js';
import { type TreeEntry, walkTree } from '../tree-walk.js';

export interface RemoveOptions {
  os: HostOs;
  recursive: boolean;
  force: boolean;
  /** Runs inside the platform sandbox, whose view of the filesystem is narrower than the host's. */
  sandboxed: boolean;
  guard: PathGuard | null;
  /** Told of each entry a tree removal checks, then removes. */
  progress?: ProgressSink | null;
}

/**
 * Removes a file, symlink or directory. Symlinks are never followed: the link itself is removed,
 * never what it points to. `force` makes a missing path a success; a non-empty directory needs
 * `recursive` (an empty one is removed either way, as in the reference). A tree is first walked
 * whole: if anything in it may not be removed (a protected, denied or read-only path, a mount
 * point of the sandbox), the remove is refused before anything is touched.
 */
export async function removeAt(path: string, options: RemoveOptions): Promise<void> {
  // A trailing separator would make lstat follow a symlink leaf (`link/` names the target
  // directory), and the tree below would be emptied instead of the link being removed.
  const name = normalizeNativePath(options.os, path) ?? path;
  let located: LocatedName;
  try {
    located = await locateName(name, options.os);
  } catch (error) {
    if (options.force && isFsError(error) && error.kind === 'not_found') {
      return await missingIsRemoved(name, options);
    }
    throw error;
  }
  try {
    const stats = await lstat(fsPathArg(located.access)).catch((error: unknown) => {
      if (hasErrno(error, 'ENOENT') && options.force) return null;
      throw fromOsError(error, name);
    });
    if (stats === null) return await missingIsRemoved(name, options);
    if (options.guard !== null)
      refuseGuarded(options.guard, located, name, options.os, 'remove', stats.isSymbolicLink());
    if (!stats.isDirectory()) return await removeNonDirectory(located.access, name, options.os);
    if (options.recursive) return await removeTree(located, name, options);
    await rmdir(fsPathArg(located.access)).catch((error: unknown) => {
      if (hasErrno(error, 'ENOTEMPTY', 'EEXIST')) {
        throw new FsError(
          'is_directory',
          `Directory not empty: ${displayPath(name)} (pass recursive: true to remove it with its contents)`,
        );
      }
      throw fromOsError(error, name);
    });
  } finally {
    await located.parent.close();
  }
}

/**
 * The removed (or renamed, or replaced) name's own rules: it must be writable by the guard and by
 * the executable surface, and a writable root is never removed (it is the sandbox's mount). A
 * symlink standing on a surface name itself (`.codex -> /usr`) may be removed: removing a link runs
 * nothing, and it would otherwise block the workspace's sandbox for good.
 */
export function refuseGuarded(
  guard: PathGuard,
  located: LocatedName,
  name: string,
  os: HostOs,
  verb: 'remove' | 'rename' | 'replace' = 'remove',
  isSymlink = false,
): void {
  const { physical } = located;
  const decision = decideWrite(guard, physical, os);
  const plantedLink = !decision.allowed && decision.surfaceLeaf === true && isSymlink && verb === 'remove';
  if (!plantedLink) assertWritable(guard, physical, name, os);
  assertLocatedAllowed(located, guard, 'write', name, os);
  const root = guard.entries.find(
    (entry) => entry.reason === 'writable_root' && samePath(os, entry.path, physical),
  );
  if (root !== undefined) {
    throw new FsError(
      'permission_denied',
      `cannot ${verb} ${displayPath(name)}: it is a writable root of the sandbox; ${verb} what is inside it instead`,
    );
  }
}

async function missingIsRemoved(name: string, options: RemoveOptions): Promise<void> {
  if (options.sandboxed) await refuseMissingBehindEscapingLink(name, options.os);
}

/**
 * `force` turns "missing" into success, but inside the sandbox "missing" can mean "behind a symlink
 * whose target the sandbox does not show": the host file would still be there while we reported it
 * gone. A missing path with a dangling symlink among its ancestors is therefore refused, not
 * reported removed.
 */
async function refuseMissingBehindEscapingLink(path: string, os: HostOs): Promise<void> {
  for (let ancestor = parentPath(os, path); ancestor !== null; ancestor = parentPath(os, ancestor)) {
    const stats = await lstat(fsPathArg(ancestor)).catch(() => null);
    if (stats === null || !stats.isSymbolicLink()) continue;
    const targetVisible = await stat(fsPathArg(ancestor)).then(
      () => true,
      () => false,
    );
    if (!targetVisible) {
      throw new FsError(
        'symlink_escape',
        `cannot remove ${displayPath(path)}: it lies behind the symlink ${displayPath(ancestor)}, whose target is outside the sandbox`,
      );
    }
  }
}

async function removeNonDirectory(access: string, path: string, os: HostOs): Promise<void> {
  try {
    await unlink(fsPathArg(access));
  } catch (error) {
    // A Windows directory symlink or junction is removed with rmdir (which does not follow it).
    if (os === 'windows' && hasErrno(error, 'EPERM', 'EISDIR')) {
      await rmdir(fsPathArg(access)).catch((inner: unknown) => {
        throw fromOsError(inner, path);
      });
      return;
    }
    // Already gone (removed concurrently): the goal is met.
    if (!hasErrno(error, 'ENOENT')) throw fromOsError(error, path);
  }
}

function tooMany(path: string): () => FsError {
  return () =>
    new FsError(
      'invalid_request',
      `cannot remove ${displayPath(path)}: it holds more than ${LIMITS.treeMaxEntries} entries; remove it in parts`,
    );
}

interface RemovalScope {
  /** Physical path of the directory. */
  physical: string;
  display: string;
  guard: GuardScope;
  /** The executable surface's facts of the directory (null without a guard). */
  surface: DirectorySurface | null;
}

/**
 * Walks the tree once to prove it can be removed whole, then removes it depth-first. Both walks go
 * through opened directories (tree-walk.ts), so a directory swapped for a symlink meanwhile is
 * removed as the link, never followed; entries created between the walks are checked as they are
 * met.
 */
async function removeTree(located: LocatedName, name: string, options: RemoveOptions): Promise<void> {
  const { os } = options;
  const root = await openDirectory(located.access, os, { noFollow: true, display: name });
  try {
    const survey = removalSurvey(root, name, os, options.guard);
    const checked = progressCounter(options.progress, 'checked');
    await survey.walk(async () => checked());
    checked.total();
    const removed = progressCounter(options.progress, 'done');
    await walkTree(
      root,
      name,
      survey.rootScope,
      {
        async enter(parent, entry, directory) {
          removed();
          return survey.enter(parent, entry, directory);
        },
        async visit(parent, entry, directory) {
          survey.check(parent, entry);
          await removeNonDirectory(directory.child(entry.name), entry.display, os);
          removed();
        },
        async leave(context, entryName, parent) {
          const access = parent === null || entryName === null ? located.access : parent.child(entryName);
          await removeEmptyDirectory(access, context.display);
        },
      },
      survey.options,
    );
  } finally {
    await root.close();
  }
}

/**
 * The checks that prove the tree at the opened directory `root` may go whole: it is not a mount
 * point of the sandbox, and nothing in it is protected, denied, read-only or mounted. `walk` makes
 * the survey pass, touching nothing; `inspect` sees every entry (fs/rename also learns what a copy
 * would skip). The same `enter`/`check` are reused by the pass that acts, so entries created
 * meanwhile are checked as they are met.
 */
export function removalSurvey(root: DirectoryAnchor, name: string, os: HostOs, guard: PathGuard | null) {
  const mounts = treeMountPoints();
  if (mounts?.has(root.physical)) {
    throw new FsError(
      'permission_denied',
      `cannot remove ${displayPath(name)}: it is a mount point of the sandbox (a denied, read-only or protected path, or another writable root)`,
    );
  }
  const treeGuard = new TreeGuard(guard, os, root.physical, mounts);
  const scope = (
    physical: string,
    display: string,
    parent: RemovalScope | null,
    surface: DirectorySurface | null,
  ): RemovalScope => ({
    physical,
    display,
    guard: treeGuard.scope(physical, parent?.guard ?? null),
    surface,
  });
  const options = {
    os,
    maxEntries: LIMITS.treeMaxEntries,
    tooMany: tooMany(name),
    onLoop: 'refuse',
  } as const;
  // A git directory, a nested repository's `.git` or a hooks directory inside the tree keeps the
  // whole tree: the surface is read-only, its removal included.
  const enter = async (parent: RemovalScope, entry: TreeEntry, directory: DirectoryAnchor) => {
    treeGuard.check(directory.physical, entry.display, 'remove', parent.guard);
    if (parent.surface !== null) assertSurfaceAllows(parent.surface, entry.name, 'write', entry.display, os);
    const surface = parent.surface === null ? null : childSurface(parent.surface, entry.name, directory, os);
    return scope(directory.physical, entry.display, parent, surface);
  };
  const check = (parent: RemovalScope, entry: TreeEntry): void => {
    treeGuard.check(childPath(os, parent.physical, entry.name), entry.display, 'remove', parent.guard);
    if (parent.surface !== null) assertSurfaceAllows(parent.surface, entry.name, 'write', entry.display, os);
  };
  const rootScope = scope(
    root.physical,
    name,
    null,
    guard === null ? null : directorySurface(root, guard, os),
  );
  return {
    rootScope,
    enter,
    check,
    options,
    walk: (inspect: (entry: TreeEntry) => Promise<void>) =>
      walkTree(
        root,
        name,
        rootScope,
        {
          async enter(parent, entry, directory) {
            await inspect(entry);
            return enter(parent, entry, directory);
          },
          async visit(parent, entry) {
            check(parent, entry);
            await inspect(entry);
          },
          async leave() {},
        },
        options,
      ),
  };
}

async function removeEmptyDirectory(access: string, path: string): Promise<void> {
  try {
    await rmdir(fsPathArg(access));
  } catch (error) {
    if (hasErrno(error, 'ENOENT')) return;
    if (hasErrno(error, 'ENOTEMPTY', 'EEXIST')) {
      throw new FsError(
        'io_error',
        `Directory not empty: ${displayPath(path)} (entries were created in it while it was being removed)`,
      );
    }
    throw fromOsError(error, path);
  }
}

export const removeOperation: Operation<'fs/remove'> = {
  parse: (raw, os) => ({
    path: pathParam(raw, 'path', os),
    recursive: requiredBoolean(raw, 'recursive'),
    force: requiredBoolean(raw, 'force'),
  }),
  async run({ path, recursive, force }, context) {
    await removeAt(path, {
      os: context.os,
      recursive,
      force,
      sandboxed: context.sandboxed,
      guard: context.guard,
      progress: context.progress,
    });
    return { response: {} };
  },
};
