import { FsError, fsPathArg, type HostOs, normalizeNativePath, parentPath } from '@fs-sandbox/policy/core';
import { childPath } from '../child-path.js';
import { DeepPaths } from '../deep-paths.js';
import { displayPath } from '../display-path.js';
import { lstat, rmdir, stat, unlink } from '../fs-async.js';
import { listDirectory } from '../list-directory.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { optionalBoolean, pathParam } from '../params.js';

export interface RemoveOptions {
  os: HostOs;
  recursive: boolean;
  force: boolean;
  /** Runs inside the platform sandbox, whose view of the filesystem is narrower than the host's. */
  sandboxed: boolean;
}

// Names handled per listing pass: a directory with millions of entries is emptied in bounded memory.
const BATCH_ENTRIES = 4096;

/**
 * Removes a file, symlink or directory. Symlinks are never followed: the link itself is removed,
 * never what it points to. `force` makes a missing path a success; a non-empty directory needs
 * `recursive` (an empty one is removed either way, as in the reference).
 */
export async function removeAt(path: string, options: RemoveOptions): Promise<void> {
  // A trailing separator would make lstat follow a symlink leaf (`link/` names the target
  // directory), and the tree below would be emptied instead of the link being removed.
  const name = normalizeNativePath(options.os, path) ?? path;
  const stats = await lstat(fsPathArg(name)).catch((error: unknown) => {
    if (hasErrno(error, 'ENOENT') && options.force) return null;
    throw fromOsError(error, name);
  });
  if (stats === null) {
    if (options.sandboxed) await refuseMissingBehindEscapingLink(name, options.os);
    return;
  }
  if (!stats.isDirectory()) return await removeNonDirectory(name, options.os);
  if (options.recursive) return await removeTree(name, options.os);
  await rmdir(fsPathArg(name)).catch((error: unknown) => {
    if (hasErrno(error, 'ENOTEMPTY', 'EEXIST')) {
      throw new FsError(
        'is_directory',
        `Directory not empty: ${displayPath(name)} (pass recursive: true to remove it with its contents)`,
      );
    }
    throw fromOsError(error, name);
  });
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

async function removeNonDirectory(path: string, os: HostOs, access: string = path): Promise<void> {
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

interface PendingDirectory {
  path: string;
  identity: string;
  /** Its last listing was complete: once its subdirectories are gone it should be empty. */
  drained: boolean;
}

/**
 * Depth-first, iterative (a 5 000-level tree must not overflow the stack), in bounded memory: a
 * directory on top of the stack is listed a batch at a time, its files removed and its
 * subdirectories pushed; once it is empty, it is removed. A subdirectory whose device/inode is
 * already pending is a mount looping back into the tree, and is refused.
 */
async function removeTree(root: string, os: HostOs): Promise<void> {
  const deep = new DeepPaths(os);
  const rootStats = await lstat(fsPathArg(root), { bigint: true }).catch((error: unknown) => {
    throw fromOsError(error, root);
  });
  const rootIdentity = `${rootStats.dev}:${rootStats.ino}`;
  const stack: PendingDirectory[] = [{ path: root, identity: rootIdentity, drained: false }];
  const pending = new Set([rootIdentity]);
  try {
    for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
      const access = await deep.reach(top.path);
      // Worth trying first: the listing that pushed its subdirectories was complete. Something
      // created meanwhile makes rmdir fail with ENOTEMPTY, and then it is simply listed again.
      if (top.drained && (await removeEmptyDirectory(top.path, access))) {
        stack.pop();
        pending.delete(top.identity);
        continue;
      }
      const listing = await listDirectory(top.path, BATCH_ENTRIES, access);
      top.drained = !listing.truncated;
      if (listing.entries.length === 0) {
        await removeEmptyDirectory(top.path, access, true);
        stack.pop();
        pending.delete(top.identity);
        continue;
      }
      for (const entry of listing.entries) {
        const child = childPath(os, top.path, entry.name);
        const childAccess = await deep.reach(child);
        const stats = await lstat(fsPathArg(childAccess), { bigint: true }).catch((error: unknown) => {
          if (hasErrno(error, 'ENOENT')) return null;
          throw fromOsError(error, child);
        });
        if (stats === null) continue;
        if (!stats.isDirectory()) {
          await removeNonDirectory(child, os, childAccess);
          continue;
        }
        const identity = `${stats.dev}:${stats.ino}`;
        if (pending.has(identity)) {
          throw new FsError(
            'io_error',
            `Refusing to remove ${displayPath(child)}: it is a mount of a directory above it`,
          );
        }
        pending.add(identity);
        stack.push({ path: child, identity, drained: false });
      }
    }
  } finally {
    await deep.close();
  }
}

/** True when the directory is gone; false when it is not empty yet (and `mustBeEmpty` is not set). */
async function removeEmptyDirectory(path: string, access: string, mustBeEmpty = false): Promise<boolean> {
  try {
    await rmdir(fsPathArg(access));
    return true;
  } catch (error) {
    if (hasErrno(error, 'ENOENT')) return true;
    if (!mustBeEmpty && hasErrno(error, 'ENOTEMPTY', 'EEXIST')) return false;
    throw fromOsError(error, path);
  }
}

export const removeOperation: Operation = {
  async run(params, context) {
    const path = pathParam(params, 'path', context.os);
    const recursive = optionalBoolean(params, 'recursive', true);
    const force = optionalBoolean(params, 'force', true);
    await removeAt(path, { os: context.os, recursive, force, sandboxed: context.sandboxed });
    return { response: {} };
  },
};
