import type { BigIntStats } from 'node:fs';
import type { WriteMode } from '@fs-sandbox/policy';
import { FsError, fsPathArg, type HostOs, type PathGuard } from '@fs-sandbox/policy/core';
import { atomicWrite } from '../atomic-write.js';
import { displayPath } from '../display-path.js';
import { modeForReplacement } from '../file-mode.js';
import { lstat } from '../fs-async.js';
import { sameVersion, sha256OfFile } from '../hash-file.js';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { optionalMatch, pathParam, requiredBytes, requiredChoice } from '../params.js';
import { type LocatedWriteTarget, withWriteTarget } from '../write-target.js';

export interface WriteFileOptions {
  os: HostOs;
  sandboxed: boolean;
  guard: PathGuard | null;
  mode?: WriteMode;
  /** Lower-case or upper-case hex SHA-256 the current content must have. */
  expectedSha256?: string;
  /** Permission bits of the result, new file or replacement (the `permissions` extension). */
  permissions?: number;
}

/** An `expectedSha256` as the helper accepts it (the broker's schema also lower-cases it). */
export const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
/** Same as the schema: three octal digits, optionally after a 0; no setuid, setgid or sticky bit. */
const PERMISSIONS_OCTAL = /^0?[0-7]{3}$/;

function hashMismatch(path: string, detail: string): FsError {
  return new FsError('hash_mismatch', `expectedSha256 does not match ${displayPath(path)}: ${detail}`);
}

/**
 * Writes `data` to `path` atomically (see atomic-write.ts), through the opened parent directory and
 * after the guard has checked the name's physical location. The target keeps its mode; a new file
 * gets 0666 under the umask; `permissions`, when given, is the mode of either. Nothing is created
 * when the parent directory is missing.
 */
export async function writeFileAt(path: string, data: Uint8Array, options: WriteFileOptions): Promise<void> {
  const createOnly = options.mode === 'create';
  await withWriteTarget(
    path,
    { os: options.os, refuseSymlinkLeaf: options.sandboxed, guard: options.guard, createOnly },
    async (target) => {
      const beforePublish =
        options.expectedSha256 === undefined
          ? undefined
          : await checkExpectedHash(target, options.expectedSha256);
      const mode = options.permissions ?? modeForReplacement(target.existing);
      await atomicWrite(target, {
        os: options.os,
        createOnly,
        mode,
        durable: true,
        fill: async (handle) => {
          await handle.writeAll(data);
        },
        ...(beforePublish ? { beforePublish } : {}),
      });
    },
  );
}

/**
 * Compares the current content's hash now and returns a re-check for the moment before the rename:
 * the name must still hold the very version that was hashed (same device, inode, size, and
 * nanosecond modification and change times), so neither a replacement nor an in-place edit after
 * the hash is silently overwritten. What remains is the window between that last lstat and the
 * rename itself, which no file-system call closes.
 */
async function checkExpectedHash(target: LocatedWriteTarget, expected: string): Promise<() => Promise<void>> {
  if (target.existing === null) throw hashMismatch(target.path, 'the file does not exist');
  const digest = await sha256OfFile(target.path, target.access, true);
  assertExpectedHash(target.path, digest.sha256, expected);
  return unchangedSince(target, digest.stats);
}

/** hash_mismatch unless `actual` (lower-case hex) is the `expected` digest (either case). */
export function assertExpectedHash(path: string, actual: string, expected: string): void {
  if (actual !== expected.toLowerCase()) {
    throw hashMismatch(path, `its current content has sha256 ${actual}`);
  }
}

/**
 * The re-check before publish: the name must still hold the version read or hashed (`stats`), or
 * the new content would silently overwrite a change made meanwhile (hash_mismatch).
 */
export function unchangedSince(target: LocatedWriteTarget, stats: BigIntStats): () => Promise<void> {
  return async () => {
    const now = await lstat(fsPathArg(target.access), { bigint: true }).catch((error: unknown) => {
      throw fromOsError(error, target.path);
    });
    if (!sameVersion(now, stats)) {
      throw hashMismatch(target.path, 'the file changed while the new content was being written');
    }
  };
}

export const writeFileOperation: Operation<'fs/writeFile'> = {
  // Every param is checked before the disk is touched: a bad one must not leave a half-made file.
  parse: (raw, os) => ({
    path: pathParam(raw, 'path', os),
    dataBase64: requiredBytes(raw, 'dataBase64'),
    mode: requiredChoice(raw, 'mode', ['overwrite', 'create']),
    expectedSha256: optionalMatch(raw, 'expectedSha256', SHA256_HEX, '64 hexadecimal digits'),
    permissions: optionalMatch(
      raw,
      'permissions',
      PERMISSIONS_OCTAL,
      'an octal mode such as "0644" (no setuid, setgid or sticky bit)',
    ),
  }),
  async run({ path, dataBase64, mode, expectedSha256, permissions }, context) {
    await writeFileAt(path, dataBase64, {
      os: context.os,
      sandboxed: context.sandboxed,
      guard: context.guard,
      mode,
      ...(expectedSha256 == null ? {} : { expectedSha256 }),
      ...(permissions == null ? {} : { permissions: Number.parseInt(permissions, 8) }),
    });
    return { response: {} };
  },
};
