import { closeSync, constants, lstatSync, openSync, readSync, statSync } from 'node:fs';
import {
  type DirectorySurface,
  FsError,
  fsPathArg,
  GIT_CONFIG_MAX_BYTES,
  type HostOs,
  isLaidOutAsGitDirectory,
  type PathGuard,
  type SurfaceEntryKind,
  type SurfaceJudgeExemptions,
  type SurfaceProbe,
  separatorFor,
  surfaceOfChild,
  surfaceOfDirectory,
  surfaceRefusal,
} from '@fs-sandbox/policy/core';
import type { DirectoryAnchor, LocatedName } from './directory-anchor.js';
import { displayPath } from './display-path.js';

/**
 * The executable surface where the helper acts (policy permissions/surface-judge.ts): what a name
 * does not show — the git directory a path lies in whatever it is called, a repository's
 * `core.hooksPath` directory, a write completing a git directory's layout — judged on the files
 * themselves at use time. The entries near a directory are looked up through its opened
 * descriptor (`/proc/self/fd/N/../..`: the kernel's own parent, whatever was renamed since), so
 * the facts are those of the directory the write goes into. A repository's config files are read
 * by path: only git's own files, which nothing in the sandbox may write.
 *
 * Synchronous lookups: a handful per directory, cheaper in a row than as thread-pool promises.
 */

function kindOf(path: string, follow: boolean): SurfaceEntryKind | null {
  try {
    const stats = follow ? statSync(fsPathArg(path)) : lstatSync(fsPathArg(path));
    if (stats.isDirectory()) return 'directory';
    if (stats.isSymbolicLink()) return 'symlink';
    return stats.isFile() ? 'file' : 'other';
  } catch {
    return null;
  }
}

function readGitFile(path: string): string | null {
  if (kindOf(path, true) !== 'file') return null;
  let fd: number;
  try {
    // Non-blocking: a FIFO swapped in after the stat must not hang the helper in open(2).
    fd = openSync(fsPathArg(path), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(GIT_CONFIG_MAX_BYTES);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The probe of the directory `access` names (an opened directory's descriptor path, or a path). */
function probeOf(access: string, os: HostOs): SurfaceProbe {
  const separator = separatorFor(os);
  return {
    entry: (levels, name) => kindOf(`${access}${`${separator}..`.repeat(levels)}${separator}${name}`, false),
    kind: (path) => {
      const kind = kindOf(path, true);
      return kind === 'symlink' ? 'other' : kind;
    },
    read: readGitFile,
  };
}

/** The surface's facts of an opened directory. */
export function directorySurface(directory: DirectoryAnchor, guard: PathGuard, os: HostOs): DirectorySurface {
  return surfaceOfDirectory(guard, directory.physical, probeOf(directory.access, os), os);
}

/** The facts of a subdirectory `name` of `parent`: opened (`directory`), or null for one being created. */
export function childSurface(
  parent: DirectorySurface,
  name: string,
  directory: DirectoryAnchor | null,
  os: HostOs,
): DirectorySurface {
  return surfaceOfChild(parent, name, directory === null ? null : probeOf(directory.access, os), os);
}

/** Refuses (`protected_path`) writing the entry `name` of the directory `surface` describes; `shown` names it. */
export function assertSurfaceAllows(
  surface: DirectorySurface,
  name: string,
  verb: 'create' | 'write',
  shown: string,
  os: HostOs,
  exemptions: SurfaceJudgeExemptions = {},
): void {
  const refusal = surfaceRefusal(surface, name, verb, os, exemptions);
  if (refusal !== null) throw new FsError('protected_path', `cannot write ${displayPath(shown)}: ${refusal}`);
}

/** The same for a name reached through its opened parent (no facts to keep: one name is written). */
export function assertLocatedAllowed(
  located: LocatedName,
  guard: PathGuard | null,
  verb: 'create' | 'write',
  shown: string,
  os: HostOs,
): void {
  if (guard === null) return;
  assertSurfaceAllows(directorySurface(located.parent, guard, os), located.name, verb, shown, os);
}

/**
 * Refuses a tree to be copied or moved that holds a directory laid out as a git directory (a bare
 * repository, a gitfile's target): its copy would be one, with the same config and hooks.
 */
export function assertNotGitDirectory(directory: DirectoryAnchor, shown: string, os: HostOs): void {
  if (isLaidOutAsGitDirectory(probeOf(directory.access, os))) {
    throw new FsError(
      'protected_path',
      `cannot copy ${displayPath(shown)}: it is laid out as a git directory (HEAD beside objects and refs, or beside commondir), whose config and hooks git would run`,
    );
  }
}
