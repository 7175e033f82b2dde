import type { BigIntStats } from 'node:fs';
import {
  assertWritable,
  FsError,
  fsPathArg,
  type HostOs,
  type PathGuard,
  pathStartsWith,
  samePath,
} from '@fs-sandbox/policy/core';
import { type LocatedName, locateName, openDirectory } from '../directory-anchor.js';
import { displayPath } from '../display-path.js';
import { treeMountPoints } from '../freshness.js';
import { link, rename, unlink } from '../fs-async.js';
import { listDirectory } from '../list-directory.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam, requiredBoolean } from '../params.js';
import { assertLocatedAllowed } from '../surface-check.js';
import { TreeGuard } from '../tree-guard.js';
import type { ProgressSink } from '../tree-progress-counter.js';
import { lstatOrNull } from '../write-target.js';
import { copyAt } from './copy.js';
import { refuseGuarded, removalSurvey, removeAt } from './remove.js';

export interface RenameOptions {
  os: HostOs;
  overwrite: boolean;
  sandboxed: boolean;
  guard: PathGuard | null;
  /** Told of each entry a move across file systems copies and removes. */
  progress?: ProgressSink | null;
}

export interface RenameOutcome {
  /** The two names were on different file systems (two bound roots): copied, then the source removed. */
  copiedAcrossDevices: boolean;
}

/**
 * Moves the name `source` (a file, a symlink — the link itself, never its target — or a whole
 * directory) to `destination`. Both names are reached through their opened parents and checked by
 * the guard on their physical locations; a directory is walked whole first, as a recursive remove
 * of the source and a copy into the destination would be, so a tree holding a protected, denied or
 * mounted path, or one that would land on such a path, is refused before anything moves. Across
 * two file systems (EXDEV: two bound roots) it copies with fs/copy's rules and then removes the
 * source with fs/remove's.
 */
export async function renameAt(
  source: string,
  destination: string,
  options: RenameOptions,
): Promise<RenameOutcome> {
  const { os } = options;
  const from = await locateName(source, os);
  try {
    const to = await locateName(destination, os);
    try {
      const stats = await lstatOrNull(from.access, source);
      if (stats === null) throw new FsError('not_found', `No such file or directory: ${displayPath(source)}`);
      if (samePath(os, from.physical, to.physical)) {
        throw new FsError('invalid_request', `fs/rename cannot rename ${displayPath(source)} onto itself`);
      }
      if (stats.isDirectory() && pathStartsWith(os, to.physical, from.physical)) {
        throw new FsError(
          'invalid_request',
          `fs/rename cannot move a directory into itself: ${displayPath(destination)} is inside ${displayPath(source)}`,
        );
      }
      // The guard first: it names the rule (a protected name is also a read-only mount).
      if (options.guard !== null) {
        refuseGuarded(options.guard, from, source, os, 'rename');
        assertWritable(options.guard, to.physical, destination, os);
      }
      refuseMountedName(from.physical, source, 'rename');
      const existing = await lstatOrNull(to.access, destination);
      assertLocatedAllowed(to, options.guard, existing === null ? 'create' : 'write', destination, os);
      if (existing !== null) await refuseExisting(existing, to, destination, stats, options);
      const skipsEntries = stats.isDirectory() ? await surveyTree(from, to, source, options) : false;
      return await move(from, to, source, destination, stats, existing !== null, skipsEntries, options);
    } finally {
      await to.parent.close();
    }
  } finally {
    await from.parent.close();
  }
}

/** A mount point of the sandbox (a mask, a read-only bind, another root) cannot be moved or replaced. */
function refuseMountedName(physical: string, name: string, verb: string): void {
  if (treeMountPoints()?.has(physical)) {
    throw new FsError(
      'permission_denied',
      `cannot ${verb} ${displayPath(name)}: it is a mount point of the sandbox (a denied, read-only or protected path, or another writable root)`,
    );
  }
}

/** What may stand at the destination: nothing, or with `overwrite` what rename(2) itself would replace. */
async function refuseExisting(
  existing: BigIntStats,
  to: LocatedName,
  destination: string,
  source: BigIntStats,
  options: RenameOptions,
): Promise<void> {
  if (!options.overwrite) {
    throw new FsError(
      'already_exists',
      `${displayPath(destination)} already exists (pass overwrite: true to replace it)`,
    );
  }
  if (options.guard !== null) refuseGuarded(options.guard, to, destination, options.os, 'replace');
  refuseMountedName(to.physical, destination, 'replace');
  if (existing.isDirectory() !== source.isDirectory()) {
    throw new FsError(
      existing.isDirectory() ? 'is_directory' : 'not_directory',
      `cannot replace ${displayPath(destination)}: a ${source.isDirectory() ? 'directory' : 'file'} can only replace a ${source.isDirectory() ? 'directory' : 'file'}`,
    );
  }
  if (existing.isDirectory() && (await listDirectory(destination, 1, to.access)).entries.length > 0) {
    throw new FsError(
      'is_directory',
      `cannot replace ${displayPath(destination)}: it is a directory that is not empty`,
    );
  }
}

/**
 * Walks the source tree once, touching nothing: every entry must be removable from where it is
 * (fs/remove's survey) and creatable where it lands (below the destination's physical location).
 * Returns whether it holds entries a copy would skip (FIFOs, sockets, devices).
 */
async function surveyTree(
  from: LocatedName,
  to: LocatedName,
  source: string,
  options: RenameOptions,
): Promise<boolean> {
  const { os, guard } = options;
  const root = await openDirectory(from.access, os, { noFollow: true, display: source });
  try {
    const landing = new TreeGuard(guard, os, to.physical, treeMountPoints());
    const landingScope = landing.scope(to.physical, null);
    let skipsEntries = false;
    await removalSurvey(root, source, os, guard).walk(async (entry) => {
      // Entry displays are built from `source` by appending, so the suffix is the path below it.
      const below = entry.display.slice(source.length);
      const landed = `${to.physical}${below}`;
      landing.check(landed, landed, 'create', landingScope);
      if (!entry.stats.isDirectory() && !entry.stats.isFile() && !entry.stats.isSymbolicLink()) {
        skipsEntries = true;
      }
    });
    return skipsEntries;
  } finally {
    await root.close();
  }
}

async function move(
  from: LocatedName,
  to: LocatedName,
  source: string,
  destination: string,
  stats: BigIntStats,
  replacing: boolean,
  skipsEntries: boolean,
  options: RenameOptions,
): Promise<RenameOutcome> {
  try {
    if (!replacing && !stats.isDirectory()) await linkThenUnlink(from.access, to.access, destination);
    else await rename(fsPathArg(from.access), fsPathArg(to.access));
    return { copiedAcrossDevices: false };
  } catch (error) {
    if (!hasErrno(error, 'EXDEV')) throw renameError(error, source, destination);
  }
  if (skipsEntries) {
    throw new FsError(
      'not_regular_file',
      `cannot move ${displayPath(source)} to another file system: it holds FIFOs, sockets or devices, which a copy cannot carry`,
    );
  }
  await copyAt(source, destination, { ...options, recursive: true });
  try {
    await removeAt(source, { ...options, recursive: true, force: false });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new FsError(
      'io_error',
      `${displayPath(source)} was copied to ${displayPath(destination)} (another file system) but could not be removed afterwards: ${reason}; both now exist`,
      { copied: true, sourceRemoved: false },
    );
  }
  return { copiedAcrossDevices: true };
}

/**
 * Without `overwrite`, a file or link is moved by link(2) then unlink(2): link fails if the name
 * appeared since it was checked, so nothing that appears meanwhile is replaced (rename(2) would
 * replace it silently). File systems without hard links fall back to rename.
 */
async function linkThenUnlink(from: string, to: string, destination: string): Promise<void> {
  try {
    await link(fsPathArg(from), fsPathArg(to));
  } catch (error) {
    if (hasErrno(error, 'EEXIST')) {
      throw new FsError(
        'already_exists',
        `${displayPath(destination)} already exists (it appeared meanwhile)`,
      );
    }
    if (!hasErrno(error, 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK')) throw error;
    await rename(fsPathArg(from), fsPathArg(to));
    return;
  }
  await unlink(fsPathArg(from));
}

function renameError(error: unknown, source: string, destination: string): FsError {
  if (hasErrno(error, 'ENOTEMPTY', 'EEXIST')) {
    return new FsError(
      'is_directory',
      `cannot replace ${displayPath(destination)}: it is a directory that is not empty`,
    );
  }
  if (hasErrno(error, 'EBUSY')) {
    return new FsError(
      'permission_denied',
      `cannot rename ${displayPath(source)}: it or its destination is in use as a mount point`,
    );
  }
  if (hasErrno(error, 'EINVAL')) {
    return new FsError(
      'invalid_request',
      `fs/rename cannot move a directory into itself: ${displayPath(destination)}`,
    );
  }
  return fromOsError(error, source) as FsError;
}

export const renameOperation: Operation<'fs/rename'> = {
  parse: (raw, os) => ({
    sourcePath: pathParam(raw, 'sourcePath', os),
    destinationPath: pathParam(raw, 'destinationPath', os),
    overwrite: requiredBoolean(raw, 'overwrite'),
  }),
  async run({ sourcePath, destinationPath, overwrite }, context) {
    const outcome = await renameAt(sourcePath, destinationPath, {
      os: context.os,
      overwrite,
      sandboxed: context.sandboxed,
      guard: context.guard,
      progress: context.progress,
    });
    return { response: outcome.copiedAcrossDevices ? { copiedAcrossDevices: true } : {} };
  },
};
