import { FsError, fsPathArg, type HostOs, parentPath } from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import { lstat, mkdir, stat } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { optionalBoolean, pathParam } from '../params.js';

/** Creates a directory; an existing directory (or a link to one) is success, as in the reference. */
export async function createDirectoryAt(path: string, recursive: boolean, os: HostOs): Promise<void> {
  try {
    await mkdir(fsPathArg(path), { recursive });
    return;
  } catch (error) {
    if (hasErrno(error, 'EEXIST')) return await requireDirectory(path);
    if (hasErrno(error, 'ENOENT') && !recursive) {
      const parent = parentPath(os, path) ?? path;
      throw new FsError(
        'not_found',
        `No such file or directory: ${displayPath(parent)} (the parent of ${displayPath(path)} does not exist; pass recursive: true to create it)`,
      );
    }
    // Recursive mkdir reports a file in the way as EEXIST or ENOTDIR depending on where it sits.
    if (hasErrno(error, 'ENOTDIR')) throw await blockedBy(path, os, error);
    throw fromOsError(error, path);
  }
}

async function requireDirectory(path: string): Promise<void> {
  const stats = await stat(fsPathArg(path)).catch(() => null);
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
  return fromOsError(error, path);
}

export const createDirectoryOperation: Operation = {
  async run(params, context) {
    const path = pathParam(params, 'path', context.os);
    const recursive = optionalBoolean(params, 'recursive', true);
    await createDirectoryAt(path, recursive, context.os);
    return { response: {} };
  },
};
