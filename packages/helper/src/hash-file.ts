import { openRegularFile } from './open-regular-file.js';
import { fromOsError } from './os-error.js';

const CHUNK_BYTES = 1024 * 1024;

export interface FileDigest {
  sha256: string;
  dev: bigint;
  ino: bigint;
}

/** SHA-256 (lower-case hex) of a regular file's current content, with the identity of the file hashed. */
export async function sha256OfFile(path: string, noFollow: boolean): Promise<FileDigest> {
  // Loaded only when a hash is asked for: node:crypto costs start-up time every other request would pay.
  const { createHash } = await import('node:crypto');
  const file = await openRegularFile(path, { noFollow });
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
    return { sha256: hash.digest('hex'), dev: file.dev, ino: file.ino };
  } catch (error) {
    throw fromOsError(error, path);
  } finally {
    await file.handle.close();
  }
}
