import {
  assertWritable,
  FsError,
  fsPathArg,
  type HostOs,
  isFsError,
  joinPath,
  type PathGuard,
  parentPath,
  splitNativePath,
} from '@fs-sandbox/policy/core';
import { type DirectoryAnchor, locateName, openDirectory } from '../directory-anchor.js';
import { displayPath } from '../display-path.js';
import { lstat, mkdir, stat } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam, requiredBoolean } from '../params.js';
import {
  assertLocatedAllowed,
  assertSurfaceAllows,
  childSurface,
  directorySurface,
} from '../surface-check.js';

/**
 * Creates a directory; an existing directory (or a link to one) is success, as in the reference.
 * Every directory it creates is made through its opened parent after the guard has checked the
 * physical location, so a symlink on the way (`<root>/x -> <root>`) cannot turn `x/.git` into a
 * real `.git`.
 */
export async function createDirectoryAt(
  path: string,
  recursive: boolean,
  os: HostOs,
  guard: PathGuard | null,
): Promise<void> {
  if (!recursive) return await createOne(path, os, guard);
  const { existing, missing } = await deepestExistingDirectory(path, os);
  let anchor = existing;
  try {
    // Every directory to be made is checked before the first is: a refusal leaves nothing behind.
    const existingSurface = guard === null ? null : directorySurface(existing, guard, os);
    if (guard !== null && existingSurface !== null) {
      let planned = existingSurface;
      for (const [index, name] of missing.entries()) {
        const physical = joinPath(os, existing.physical, ...missing.slice(0, index + 1));
        const shown = ancestorAbove(os, path, missing.length - 1 - index);
        assertWritable(guard, physical, shown, os);
        assertSurfaceAllows(planned, name, 'create', shown, os);
        planned = childSurface(planned, name, null, os);
      }
    }
    // Then again as each is made, on the directory just opened (its facts derived level by level).
    let surface = existingSurface;
    for (const [index, name] of missing.entries()) {
      const shown = ancestorAbove(os, path, missing.length - 1 - index);
      if (guard !== null) assertWritable(guard, joinPath(os, anchor.physical, name), shown, os);
      if (surface !== null) assertSurfaceAllows(surface, name, 'create', shown, os);
      await mkdir(fsPathArg(anchor.child(name))).catch((error: unknown) => {
        if (!hasErrno(error, 'EEXIST')) throw fromOsError(error, shown);
      });
      const next = await openDirectory(anchor.child(name), os, { display: shown }).catch(
        async (error: unknown) => {
          if (isFsError(error) && error.kind === 'not_directory') throw await blockedBy(path, os, error);
          throw error;
        },
      );
      await anchor.close();
      anchor = next;
      if (surface !== null) surface = childSurface(surface, name, next, os);
    }
  } finally {
    await anchor.close();
  }
}

/** `path` with its last `levels` names removed. */
function ancestorAbove(os: HostOs, path: string, levels: number): string {
  let current = path;
  for (let level = 0; level < levels; level++) current = parentPath(os, current) ?? current;
  return current;
}

async function createOne(path: string, os: HostOs, guard: PathGuard | null): Promise<void> {
  const located = await locateName(path, os).catch((error: unknown) => {
    if (isFsError(error) && error.kind === 'not_found') {
      const parent = parentPath(os, path) ?? path;
      throw new FsError(
        'not_found',
        `No such file or directory: ${displayPath(parent)} (the parent of ${displayPath(path)} does not exist; pass recursive: true to create it)`,
      );
    }
    throw error;
  });
  try {
    if (guard !== null) assertWritable(guard, located.physical, path, os);
    assertLocatedAllowed(located, guard, 'create', path, os);
    await mkdir(fsPathArg(located.access));
  } catch (error) {
    if (hasErrno(error, 'EEXIST')) return await requireDirectory(located.access, path);
    throw fromOsError(error, path);
  } finally {
    await located.parent.close();
  }
}

/**
 * The deepest ancestor of `path` (or `path` itself) that opens as a directory, following symlinks
 * as mkdir -p would, and the names still to create below it.
 */
async function deepestExistingDirectory(
  path: string,
  os: HostOs,
): Promise<{ existing: DirectoryAnchor; missing: string[] }> {
  const segments = splitNativePath(os, path)?.segments ?? [];
  const missing: string[] = [];
  for (let current: string | null = path; current !== null; current = parentPath(os, current)) {
    try {
      return { existing: await openDirectory(current, os, { display: current }), missing };
    } catch (error) {
      if (isFsError(error) && error.kind === 'not_found') {
        missing.unshift(segments[segments.length - 1 - missing.length] as string);
        continue;
      }
      if (isFsError(error) && error.kind === 'not_directory') throw await blockedBy(path, os, error);
      throw error;
    }
  }
  throw new FsError('not_found', `No such file or directory: ${displayPath(path)}`);
}

async function requireDirectory(access: string, path: string): Promise<void> {
  const stats = await stat(fsPathArg(access)).catch(() => null);
  if (stats?.isDirectory()) return;
  throw new FsError('already_exists', `File exists and is not a directory: ${displayPath(path)}`);
}

/** Names the ancestor that is a file rather than reporting a bare ENOTDIR. */
async function blockedBy(path: string, os: HostOs, error: unknown): Promise<unknown> {
  for (let current = parentPath(os, path); current !== null; current = parentPath(os, current)) {
    const stats = await lstat(fsPathArg(current)).catch(() => null);
    if (stats !== null && !stats.isDirectory() && !stats.isSymbolicLink()) {
      return new FsError(
        'not_directory',
        `Not a directory: ${displayPath(current)} (so ${displayPath(path)} cannot be created under it)`,
      );
    }
  }
  // The last component itself is a file.
  const stats = await lstat(fsPathArg(path)).catch(() => null);
  if (stats !== null && !stats.isDirectory()) {
    return new FsError('already_exists', `File exists and is not a directory: ${displayPath(path)}`);
  }
  return fromOsError(error, path);
}

export const createDirectoryOperation: Operation<'fs/createDirectory'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os), recursive: requiredBoolean(raw, 'recursive') }),
  async run({ path, recursive }, context) {
    await createDirectoryAt(path, recursive, context.os, context.guard);
    return { response: {} };
  },
};
