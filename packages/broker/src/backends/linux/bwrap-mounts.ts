import { EXPECT_MOUNTS_FLAG } from '@fs-sandbox/helper';
import { FsError } from '@fs-sandbox/policy/core';
import type { HelperRuntime } from '../backend.js';

/**
 * What a bwrap argv (as built by bwrap-args.ts) mounts from the host, read back from the argv so the
 * golden-tested builder stays the single source of the mount list. A helper started earlier (a
 * warm one) uses this to prove its view is still the host's: the mount points must all still be
 * mounted inside (the helper checks its own mount table), and the bound roots must still be the
 * same files on both sides (the broker sends their device/inode at request time).
 */
export interface BwrapMounts {
  /** Every host-dependent mount point (binds, masks), in argv order. */
  mountPoints: string[];
  /** Host directories and files bound in as roots: not the helper's own files, not the deny masks. */
  boundRoots: string[];
}

/** What a deny mask for a file binds (see bwrap-args.ts); it stands for nothing on the host. */
const DENY_FILE_SOURCE = '/dev/null';

/** Operands of every option bwrap-args.ts emits; anything else is refused rather than misread. */
const OPERANDS: Readonly<Record<string, number>> = {
  '--new-session': 0,
  '--die-with-parent': 0,
  '--unshare-user': 0,
  '--unshare-pid': 0,
  '--unshare-net': 0,
  '--unshare-ipc': 0,
  '--unshare-uts': 0,
  '--unshare-cgroup-try': 0,
  '--disable-userns': 0,
  '--clearenv': 0,
  '--cap-drop': 1,
  '--perms': 1,
  '--tmpfs': 1,
  '--dev': 1,
  '--proc': 1,
  '--remount-ro': 1,
  '--chdir': 1,
  '--bind': 2,
  '--ro-bind': 2,
  '--symlink': 2,
  '--setenv': 2,
};

export function readBwrapMounts(args: readonly string[], runtime: HelperRuntime): BwrapMounts {
  const helperFiles = new Set([runtime.nodePath, runtime.helperBundle]);
  const mountPoints: string[] = [];
  const boundRoots: string[] = [];
  for (let index = 0; index < args.length && args[index] !== '--'; ) {
    const option = args[index] as string;
    const operands = OPERANDS[option];
    if (operands === undefined) {
      throw new FsError('internal_error', `bwrap argv reader does not know the option ${option}`);
    }
    const [first, second] = [args[index + 1] as string, args[index + 2] as string];
    if (option === '--bind' || option === '--ro-bind') {
      mountPoints.push(second);
      if (first !== DENY_FILE_SOURCE && !helperFiles.has(first)) boundRoots.push(first);
    } else if (option === '--tmpfs' && first !== '/') {
      mountPoints.push(first);
    }
    index += 1 + operands;
  }
  return { mountPoints, boundRoots };
}

/** The helper's own arguments naming the mount points it must find mounted before acting. */
export function expectMountsArgs(mountPoints: readonly string[]): string[] {
  return mountPoints.length === 0 ? [] : [EXPECT_MOUNTS_FLAG, ...mountPoints];
}
