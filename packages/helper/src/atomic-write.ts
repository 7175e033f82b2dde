import { constants } from 'node:fs';
import { FsError, fsPathArg, type HostOs, joinPath, parentPath } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { type FileHandle, link, open, rename, unlink } from './fs-async.js';
import { fromOsError, hasErrno } from './os-error.js';
import { TEMP_NAME_ATTEMPTS, tempSiblingName } from './temp-name.js';
import type { WriteTarget } from './write-target.js';

export interface AtomicWriteOptions {
  os: HostOs;
  /** `create`: the name must not exist; claiming it is race-free (link(2) fails if it appears meanwhile). */
  createOnly: boolean;
  /** Permission bits of the new file. */
  mode: number;
  /** Flush file and directory to disk before answering (writeFile promises a durable success). */
  durable: boolean;
  /** Fills the temporary file. */
  fill(handle: FileHandle): Promise<void>;
  /** Last check right before the new content replaces the old (e.g. "the file is still the one whose hash we checked"). */
  beforePublish?(): Promise<void>;
}

// O_EXCL: the temp name is ours alone; a planted file or symlink there makes the open fail instead
// of being written through. Mode 0600 until the content is complete and the final mode is set.
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
const TEMP_MODE = 0o600;

/**
 * Writes a file atomically: a temp file in the target's directory is filled, given its final mode,
 * optionally fsynced, and then renamed over the target (or, in create mode, hard-linked to it).
 * Readers see the old content or the new, never a mix; a hard-linked target name gets a new inode
 * so the other names keep their content; on any failure the temp file is removed.
 */
export async function atomicWrite(target: WriteTarget, options: AtomicWriteOptions): Promise<void> {
  const temp = await createStagingFile(target, options.os);
  try {
    try {
      await options.fill(temp.handle);
      await sealStagingFile(temp.handle, target, options);
    } finally {
      await temp.handle.close();
    }
    await options.beforePublish?.();
  } catch (error) {
    await unlink(fsPathArg(temp.path)).catch(() => undefined);
    throw fromOsError(error, target.path);
  }
  await publishStagingFile(temp.path, target, options);
}

/**
 * The three steps of an atomic write, also run one per helper process by a write handle (its
 * blocks arrive between the first and the last): make the staging file beside the target, seal
 * it (final mode, owner, flushed), publish it over the target.
 */
export interface StagingFile {
  /** How the kernel reaches it (through the target's opened parent when the target has one). */
  path: string;
  /** Its name in the target's directory. */
  name: string;
  handle: FileHandle;
}

export function createStagingFile(target: WriteTarget, os: HostOs): Promise<StagingFile> {
  return createTemp(target.path, directoryOf(target, os), os);
}

export async function sealStagingFile(
  handle: FileHandle,
  target: WriteTarget,
  options: Pick<AtomicWriteOptions, 'mode' | 'durable'>,
): Promise<void> {
  await handle.chmod(options.mode);
  await keepOwner(handle, target);
  if (options.durable) await handle.sync();
}

/** Renames (create mode: links) the sealed staging file over the target; on failure it is removed. */
export async function publishStagingFile(
  staged: string,
  target: WriteTarget,
  options: Pick<AtomicWriteOptions, 'os' | 'createOnly' | 'durable'>,
): Promise<void> {
  const name = target.access ?? target.path;
  try {
    if (options.createOnly) await publishExclusive(staged, name, target.path);
    else await renameOver(staged, name, target.path);
  } catch (error) {
    await unlink(fsPathArg(staged)).catch(() => undefined);
    throw fromOsError(error, target.path);
  }
  if (options.durable) await syncDirectory(directoryOf(target, options.os), options.os);
}

function directoryOf(target: WriteTarget, os: HostOs): string {
  const name = target.access ?? target.path;
  return parentPath(os, name) ?? name;
}

async function createTemp(target: string, directory: string, os: HostOs): Promise<StagingFile> {
  for (let attempt = 0; attempt < TEMP_NAME_ATTEMPTS; attempt++) {
    const name = tempSiblingName();
    const path = joinPath(os, directory, name);
    try {
      return { path, name, handle: await open(fsPathArg(path), TEMP_FLAGS, TEMP_MODE) };
    } catch (error) {
      if (hasErrno(error, 'EEXIST')) continue;
      if (hasErrno(error, 'ENOENT')) {
        throw new FsError(
          'not_found',
          `No such file or directory: ${displayPath(target)} (its parent directory ${displayPath(directory)} does not exist)`,
        );
      }
      throw fromOsError(error, target);
    }
  }
  throw new FsError('io_error', `Could not create a temporary file next to ${displayPath(target)}`);
}

/**
 * An existing file keeps its owner when we are allowed to set it (the broker may run as root and
 * must not hand a user's file to root); an unprivileged helper cannot, and then the new owner is
 * the writer, as with any editor that saves by rename.
 */
async function keepOwner(handle: FileHandle, target: WriteTarget): Promise<void> {
  if (target.existing === null || process.platform === 'win32') return;
  const uid = Number(target.existing.uid);
  const gid = Number(target.existing.gid);
  if (uid === process.getuid?.() && gid === process.getgid?.()) return;
  await handle.chown(uid, gid).catch((error: unknown) => {
    if (!hasErrno(error, 'EPERM', 'EINVAL')) throw error;
  });
}

async function renameOver(temp: string, name: string, target: string): Promise<void> {
  try {
    await rename(fsPathArg(temp), fsPathArg(name));
  } catch (error) {
    // A directory (or a non-empty one) is at the name.
    if (hasErrno(error, 'EISDIR', 'ENOTEMPTY', 'EEXIST')) {
      throw new FsError(
        'is_directory',
        `path \`${displayPath(target)}\` is a directory; a file cannot replace it`,
      );
    }
    throw error;
  }
}

function alreadyExists(target: string): FsError {
  return new FsError(
    'file_already_exists',
    `File already exists: ${displayPath(target)} (a create never replaces a file)`,
  );
}

/**
 * Create mode: link(2) fails with EEXIST if the name exists at that instant, so a file that
 * appears after any earlier check is never replaced. File systems without hard links fall back to
 * claiming the name with O_EXCL (also atomic; an empty file is visible until the rename).
 */
async function publishExclusive(temp: string, name: string, target: string): Promise<void> {
  try {
    await link(fsPathArg(temp), fsPathArg(name));
    await unlink(fsPathArg(temp));
    return;
  } catch (error) {
    if (hasErrno(error, 'EEXIST')) throw alreadyExists(target);
    if (!hasErrno(error, 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK')) throw error;
  }
  let claim: FileHandle;
  try {
    claim = await open(fsPathArg(name), TEMP_FLAGS, TEMP_MODE);
  } catch (error) {
    if (hasErrno(error, 'EEXIST')) throw alreadyExists(target);
    throw error;
  }
  await claim.close();
  try {
    await rename(fsPathArg(temp), fsPathArg(name));
  } catch (error) {
    // The claimed name is still our empty placeholder: do not leave it behind.
    await unlink(fsPathArg(name)).catch(() => undefined);
    throw error;
  }
}

/** Makes the rename itself durable. Some file systems cannot fsync a directory (EINVAL); that is not a failed write. */
async function syncDirectory(directory: string, os: HostOs): Promise<void> {
  if (os === 'windows') return;
  try {
    const handle = await open(fsPathArg(directory), constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (hasErrno(error, 'EIO', 'ENOSPC', 'EDQUOT')) throw fromOsError(error, directory);
  }
}
