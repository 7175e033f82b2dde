import type { HelperResultOf } from '@fs-sandbox/policy';
import { childPath, fsPathArg, type HostOs, LIMITS } from '@fs-sandbox/policy/core';
import { stat } from '../fs-async.js';
import { byNameBytes, listDirectory } from '../list-directory.js';
import type { Operation } from '../operation.js';
import { pathParam } from '../params.js';
import { wireFileName } from '../wire-file-name.js';

type DirectoryListing = HelperResultOf<'fs/readDirectory'>;

/**
 * Lists a directory sorted by the names' bytes (the reference answers in readdir order, which a
 * client cannot rely on, so any order is one it accepts; a sorted one is stable between calls and
 * what people expect). A truncated listing is the first entries read, sorted. The flags follow
 * symlinks (like the reference); an entry whose metadata cannot be read (a dangling link, a name the
 * sandbox hides) is left out.
 */
export async function readDirectoryAt(path: string, os: HostOs): Promise<DirectoryListing> {
  const listing = await listDirectory(path, LIMITS.readDirectoryMaxEntries);
  const entries: DirectoryListing['entries'] = [];
  for (const entry of listing.entries.sort(byNameBytes)) {
    let isDirectory = entry.type === 'directory';
    let isFile = entry.type === 'file';
    if (entry.type === 'symlink' || entry.type === 'unknown') {
      const stats = await stat(fsPathArg(childPath(os, path, entry.name))).catch(() => null);
      if (stats === null) continue;
      isDirectory = stats.isDirectory();
      isFile = stats.isFile();
    }
    entries.push({ ...wireFileName(entry.name), isDirectory, isFile });
  }
  return listing.truncated ? { entries, truncated: true } : { entries };
}

export const readDirectoryOperation: Operation<'fs/readDirectory'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os) }),
  async run({ path }, context) {
    return { response: { ...(await readDirectoryAt(path, context.os)) } };
  },
};
