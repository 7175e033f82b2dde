import type { Dirent, Stats } from 'node:fs';
import { decodePathBytes, encodePathBytes, fsPathArg } from '@fs-sandbox/policy/core';
import { lstat, opendirBytes, readdirBytes } from './fs-async.js';
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

/** The order every listing is given in: by the names' bytes, as `ls` sorts in the C locale. */
export function byNameBytes(a: ListedEntry, b: ListedEntry): number {
  return Buffer.compare(a.bytes, b.bytes);
}

function typeOf(dirent: Dirent<Buffer> | Stats): EntryType {
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
        if (!Buffer.isBuffer(dirent.name)) return await listByNames(accessPath, limit);
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

/**
 * For a runtime whose directory reader cannot give names as bytes (Bun 1.4's Dir with a `buffer`
 * encoding yields entries without a name): the names as bytes in one readdir, each typed by lstat
 * (the entry itself, never a link's target). The limit still bounds the reply, but one read holds
 * every name of the directory.
 */
async function listByNames(accessPath: string, limit: number): Promise<Listing> {
  const directory = encodePathBytes(accessPath);
  const names = await readdirBytes(fsPathArg(accessPath));
  const entries: ListedEntry[] = [];
  for (const name of names.slice(0, limit)) {
    const child = Buffer.concat([directory, Buffer.from('/'), name]);
    let type: EntryType = 'unknown';
    try {
      type = typeOf(await lstat(child));
    } catch {
      // Gone since the readdir: listed as the directory held it, its type unknown.
    }
    entries.push({ name: decodePathBytes(name), bytes: name, type });
  }
  return { entries, truncated: names.length > limit };
}
