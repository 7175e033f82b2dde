import { FsError } from './error-kinds.js';
import { LIMITS } from './limits.js';

export interface WalkLimits {
  maxDepth: number;
  maxDirectories: number;
  maxEntries: number;
}

/**
 * The bounds on fs/walk options (limits.ts), with the reference's messages. The broker checks them
 * before any helper starts; the helper checks them again for callers that pipe requests to it.
 */
export function assertWalkLimits(limits: WalkLimits): void {
  if (limits.maxDirectories === 0 || limits.maxEntries === 0) {
    throw new FsError('invalid_request', 'filesystem walk limits must be greater than zero');
  }
  if (
    limits.maxDepth > LIMITS.walkMaxDepth ||
    limits.maxDirectories > LIMITS.walkMaxDirectories ||
    limits.maxEntries > LIMITS.walkMaxEntries
  ) {
    throw new FsError(
      'invalid_request',
      `filesystem walk limits exceed maximums: depth=${LIMITS.walkMaxDepth}, directories=${LIMITS.walkMaxDirectories}, entries=${LIMITS.walkMaxEntries}`,
    );
  }
}

/** The length bounds of one block read (fs/readBlock, fs/readRange), with the reference's message. */
export function assertReadBlockLength(len: number): void {
  if (len < LIMITS.readBlockMinLen || len > LIMITS.readBlockMaxLen) {
    throw new FsError(
      'invalid_request',
      `file read block length must be between ${LIMITS.readBlockMinLen} and ${LIMITS.readBlockMaxLen}`,
    );
  }
}

/** One block written through a write handle (fs/writeBlock, fs/writeRange): its length and where it ends. */
export function assertWriteBlock(offset: number, length: number): void {
  if (length < LIMITS.writeBlockMinLen || length > LIMITS.writeBlockMaxLen) {
    throw new FsError(
      'invalid_request',
      `file write block length must be between ${LIMITS.writeBlockMinLen} and ${LIMITS.writeBlockMaxLen}`,
    );
  }
  if (offset + length > LIMITS.writeHandleMaxBytes) {
    throw new FsError(
      'file_too_large',
      `a file written through a write handle may be at most ${LIMITS.writeHandleMaxBytes} bytes; this block would end at ${offset + length}`,
    );
  }
}

/** The byte length of a client-chosen read handle id (fs/open, fs/readBlock, fs/close). */
export function assertHandleIdLength(handleId: string): void {
  const bytes = Buffer.byteLength(handleId, 'utf8');
  if (bytes < 1 || bytes > LIMITS.handleIdMaxBytes) {
    throw new FsError(
      'invalid_request',
      `file handle id must be between 1 and ${LIMITS.handleIdMaxBytes} bytes`,
    );
  }
}

/** A native path within `LIMITS.pathMaxBytes`; `shown` names it in the error (its start only). */
export function assertPathLength(bytes: number, shown: string): void {
  if (bytes <= LIMITS.pathMaxBytes) return;
  throw new FsError(
    'invalid_params',
    `path is ${bytes} bytes long; at most ${LIMITS.pathMaxBytes} bytes are allowed: ${shown.slice(0, 64)}…`,
  );
}
