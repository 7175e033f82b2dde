import type { HelperResultOf } from '@fs-sandbox/policy';
import { FsError, fsPathArg } from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import { lstat, stat } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam } from '../params.js';

/** Type, size and times follow symlinks (like the reference); `isSymlink` describes the name itself. */
export async function metadataOf(path: string): Promise<HelperResultOf<'fs/getMetadata'>> {
  const own = await lstat(fsPathArg(path)).catch((error: unknown) => {
    throw fromOsError(error, path);
  });
  const stats = own.isSymbolicLink() ? await followLink(path) : own;
  return {
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    isSymlink: own.isSymbolicLink(),
    size: stats.size,
    createdAtMs: Math.trunc(stats.birthtimeMs),
    modifiedAtMs: Math.trunc(stats.mtimeMs),
    permissions: (stats.mode & 0o7777).toString(8).padStart(4, '0'),
    accessedAtMs: Math.trunc(stats.atimeMs),
    hardLinks: stats.nlink,
  };
}

async function followLink(path: string) {
  try {
    return await stat(fsPathArg(path));
  } catch (error) {
    if (hasErrno(error, 'ENOENT')) {
      throw new FsError(
        'not_found',
        `No such file or directory: ${displayPath(path)} is a symbolic link to a missing file`,
      );
    }
    throw fromOsError(error, path);
  }
}

export const getMetadataOperation: Operation<'fs/getMetadata'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os) }),
  async run({ path }) {
    return { response: { ...(await metadataOf(path)) } };
  },
};
