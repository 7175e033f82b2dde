import type { BigIntStats } from 'node:fs';
import { FsError } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { openRegularFile } from './open-regular-file.js';
import { fromOsError } from './os-error.js';

const CHUNK_BYTES = 1024 * 1024;

export interface FileDigest {
  sha256: string;
  /** fstat of the file hashed, unchanged from before the first byte was read to after the last. */
  stats: BigIntStats;
}

/** The fields that change when a file's content or identity does (nanosecond times, bigint stats). */
export function sameVersion(a: BigIntStats, b: BigIntStats): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

/** SHA-256 (lower-case hex) of bytes already in memory. */
export async function sha256OfBytes(bytes: Uint8Array): Promise<string> {
  // Loaded only when a hash is asked for, as below.
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * SHA-256 (lower-case hex) of a regular file's current content, with the version of the file hashed.
 * A file written to while it is read is refused (hash_mismatch): its hash would describe no version
 * that ever existed.
 */
export async function sha256OfFile(path: string, access: string, noFollow: boolean): Promise<FileDigest> {
  // Loaded only when a hash is asked for: node:crypto costs start-up time every other request would pay.
  const { createHash } = await import('node:crypto');
  const file = await openRegularFile(access, { noFollow, display: path });
  try {
    const hash = createHash('sha256');
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let position = 0;
    for (;;) {
      const { bytesRead } = await file.handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      hash.update(chunk.subarray(0, bytesRead));
      position += bytesRead;
    }
    if (!sameVersion(file.stats, await file.handle.stat())) {
      throw new FsError('hash_mismatch', `${displayPath(path)} changed while its hash was being computed`);
    }
    return { sha256: hash.digest('hex'), stats: file.stats };
  } catch (error) {
    throw fromOsError(error, path);
  } finally {
    await file.handle.close();
  }
}
