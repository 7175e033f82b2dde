import { fsPathArg, type HostOs, LIMITS } from '@fs-sandbox/policy/core';
import { childPath } from '../child-path.js';
import { stat } from '../fs-async.js';
import { listDirectory } from '../list-directory.js';
import type { Operation } from '../operation.js';
import { pathParam } from '../params.js';
import { type WireFileName, wireFileName } from '../wire-file-name.js';

export type DirectoryEntry = WireFileName & { isDirectory: boolean; isFile: boolean };

export interface DirectoryListing {
  entries: DirectoryEntry[];
  /** Only present (true) when the directory held more than LIMITS.readDirectoryMaxEntries entries. */
  truncated?: true;
}

/**
 * Lists a directory in readdir order. The flags follow symlinks (like the reference); an entry
 * whose metadata cannot be read (a dangling link, a name the sandbox hides) is left out.
 */
export async function readDirectoryAt(path: string, os: HostOs): Promise<DirectoryListing> {
  const listing = await listDirectory(path, LIMITS.readDirectoryMaxEntries);
  const entries: DirectoryEntry[] = [];
  for (const entry of listing.entries) {
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

export const readDirectoryOperation: Operation = {
  async run(params, context) {
    const path = pathParam(params, 'path', context.os);
    return { response: { ...(await readDirectoryAt(path, context.os)) } };
  },
};
