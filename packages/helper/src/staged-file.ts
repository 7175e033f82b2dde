import { constants } from 'node:fs';
import type { HelperParamsOf } from '@fs-sandbox/policy';
import { FsError, fsPathArg, type HostOs, type PathGuard, STAGED_NAME } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { type FileHandle, open } from './fs-async.js';
import { fromOsError, hasErrno } from './os-error.js';
import { isPlainObject } from './params.js';
import { type LocatedWriteTarget, withWriteTarget } from './write-target.js';

/**
 * A write handle's staging file, between the helper runs that make it, fill it and publish it. No
 * descriptor survives from one run to the next, so each run finds the file again by its name in the
 * target's directory, located anew (and checked by the guard on its physical location) every time,
 * and refuses a name that no longer holds the very file it made: a staging file swapped, replaced
 * by a link or hard-linked elsewhere in the meantime is never written or published.
 */
export type StagedFile = HelperParamsOf<'fs/writeRange'>['staged'];

export interface StagedContext {
  os: HostOs;
  sandboxed: boolean;
  guard: PathGuard | null;
}

const DECIMAL = /^\d{1,20}$/;

// O_NOFOLLOW: a link planted at the staging name is refused by the kernel, not followed.
const OPEN_FLAGS = constants.O_WRONLY | constants.O_NOFOLLOW;

export function stagedParam(params: Record<string, unknown>): StagedFile {
  const raw = params.staged;
  if (
    !isPlainObject(raw) ||
    typeof raw.name !== 'string' ||
    !STAGED_NAME.test(raw.name) ||
    typeof raw.dev !== 'string' ||
    !DECIMAL.test(raw.dev) ||
    typeof raw.ino !== 'string' ||
    !DECIMAL.test(raw.ino)
  ) {
    throw new FsError(
      'invalid_params',
      'invalid value for `staged`: expected {name, dev, ino} naming a staging file',
    );
  }
  return { name: raw.name, dev: raw.dev, ino: raw.ino };
}

/** Locates the write's target (guard checked) and opens its staging file, checked to be the one made. */
export async function withStagedFile<T>(
  path: string,
  staged: StagedFile,
  context: StagedContext,
  action: (file: FileHandle, target: LocatedWriteTarget, stagedAccess: string) => Promise<T>,
): Promise<T> {
  const options = { os: context.os, refuseSymlinkLeaf: context.sandboxed, guard: context.guard };
  return withWriteTarget(path, options, async (target) => {
    const access = target.parent.child(staged.name);
    const file = await open(fsPathArg(access), OPEN_FLAGS).catch((error: unknown) => {
      if (hasErrno(error, 'ENOENT', 'ELOOP')) throw stagingGone(path);
      throw fromOsError(error, path);
    });
    try {
      const stats = await file.stat();
      if (
        !stats.isFile() ||
        stats.dev.toString() !== staged.dev ||
        stats.ino.toString() !== staged.ino ||
        stats.nlink !== 1n
      ) {
        throw stagingGone(path);
      }
      return await action(file, target, access);
    } finally {
      await file.close();
    }
  });
}

function stagingGone(path: string): FsError {
  return new FsError(
    'not_found',
    `the staging file of the write handle on ${displayPath(path)} is gone or was replaced; nothing was written to ${displayPath(path)}`,
  );
}
