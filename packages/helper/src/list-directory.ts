import type { Dirent } from 'node:fs';
import { decodePathBytes, fsPathArg } from '@fs-sandbox/policy/core';
import { opendirBytes } from './fs-async.js';
import { fromOsError } from './os-error.js';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other' | 'unknown';

export interface ListedEntry {
  /** The name as a native path string (bytes that are not UTF-8 kept as escapes, see policy path-bytes.ts). */
  name: string;
  /** The name's exact bytes (for byte-order sorting). */
  bytes: Buffer;
  /** From the directory entry itself (d_type); `unknown` when the file system does not say. */
  type: EntryType;
}

export interface Listing {
  entries: ListedEntry[];
  /** The directory held more than `limit` entries; only the first `limit` are listed. */
  truncated: boolean;
}

function typeOf(dirent: Dirent<Buffer>): EntryType {
  if (dirent.isSymbolicLink()) return 'symlink';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isFile()) return 'file';
  if (dirent.isFIFO() || dirent.isSocket() || dirent.isCharacterDevice() || dirent.isBlockDevice())
    return 'other';
  return 'unknown';
}

/**
 * Lists a directory without ever holding more than `limit` names: entries are read as raw bytes in
 * batches and reading stops at the limit, so a directory with millions of entries costs bounded
 * memory. `accessPath` is what the kernel is given; `path` is what errors name.
 */
export async function listDirectory(
  path: string,
  limit: number,
  accessPath: string = path,
): Promise<Listing> {
  const entries: ListedEntry[] = [];
  try {
    const directory = await opendirBytes(fsPathArg(accessPath), 256);
    try {
      for (;;) {
        const dirent = (await directory.read()) as Dirent<Buffer> | null;
        if (dirent === null) return { entries, truncated: false };
        if (entries.length === limit) return { entries, truncated: true };
        entries.push({ name: decodePathBytes(dirent.name), bytes: dirent.name, type: typeOf(dirent) });
      }
    } finally {
      await directory.close();
    }
  } catch (error) {
    throw fromOsError(error, path);
  }
}
