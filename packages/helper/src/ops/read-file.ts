import { FsError, LIMITS, type PathGuard } from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import { openRegularFile, type RegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { pathParam } from '../params.js';
import { sizeText } from '../size-text.js';

const GROWTH_CHUNK_BYTES = 1024 * 1024;
const END_PROBE_BYTES = 1024;

function tooLarge(path: string, detail: string): FsError {
  return new FsError(
    'file_too_large',
    `file \`${displayPath(path)}\` ${detail}; fs/readFile reads at most ${sizeText(LIMITS.readFileMaxBytes)} (use fs/open and fs/readBlock for larger files)`,
  );
}

/**
 * Reads a whole regular file, bounded by `limit` (LIMITS.readFileMaxBytes). The size is checked
 * from fstat before any byte is read (a sparse 100 GiB file is refused at once) and again while
 * reading, because a file can grow between the fstat and the last read.
 */
export async function readWholeFile(
  path: string,
  guard: PathGuard | null,
  limit: number = LIMITS.readFileMaxBytes,
): Promise<Buffer> {
  const file = await openRegularFile(path, { guard });
  try {
    return await readOpenedFile(file, path, limit);
  } catch (error) {
    throw fromOsError(error, path);
  } finally {
    await file.handle.close();
  }
}

/**
 * The reading half of readWholeFile: `file.size` is what fstat said when the file was opened.
 * `refuse` words the file_too_large error for the caller's method and limit.
 */
export async function readOpenedFile(
  file: RegularFile,
  path: string,
  limit: number,
  refuse: (path: string, detail: string) => FsError = tooLarge,
): Promise<Buffer> {
  if (file.size > limit) throw refuse(path, `is ${sizeText(file.size)}`);
  const buffer = Buffer.allocUnsafe(file.size);
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await file.handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) return buffer.subarray(0, filled);
    filled += bytesRead;
  }
  const growth: Buffer[] = [];
  let total = filled;
  // The first read past the size almost always finds the end, so it gets a small buffer: a
  // megabyte for it was an mmap of its own (and a munmap) in every read of a small file.
  for (let chunkBytes = END_PROBE_BYTES; ; chunkBytes = GROWTH_CHUNK_BYTES) {
    const chunk = Buffer.allocUnsafe(chunkBytes);
    const { bytesRead } = await file.handle.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > limit) throw refuse(path, 'grew past the limit while it was being read');
    growth.push(chunk.subarray(0, bytesRead));
  }
  return growth.length === 0 ? buffer : Buffer.concat([buffer, ...growth]);
}

export const readFileOperation: Operation<'fs/readFile'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os) }),
  async run({ path }, context) {
    const data = await readWholeFile(path, context.guard);
    return { response: { dataBase64: '' }, binary: { field: 'dataBase64', data } };
  },
};
