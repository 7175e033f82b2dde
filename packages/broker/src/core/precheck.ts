import {
  assertWritable,
  checkAccess,
  decideWrite,
  EXECUTABLE_SURFACE,
  FsError,
  type HelperRuntimeReads,
  type HostOs,
  isDeniedPath,
  isProcfsAlias,
  joinPath,
  type PathGuard,
  type PermissionProfile,
  parentPath,
  runtimeReadOf,
  type SurfaceEntry,
  splitNativePath,
  type TouchedPath,
} from '@fs-sandbox/policy';
import { assertPlainWindowsPath } from '../backends/windows/windows-path-guard.js';

import { realOrSelf } from '../runner/path-guard.js';

/**
 * Clear denials before any spawn. This is not what enforces the policy: the kernel sandbox and the
 * helper's physical check at use time are (a missing `.git` or deny path under a writable root,
 * which bwrap cannot mask without a placeholder on the host, is refused by the helper's guard).
 * This check only turns the obvious refusals into errors that name the rule ("outside writable
 * roots", "denied by entry …", "protected metadata path .git") before any helper starts.
 */

/**
 * Throws `permission_denied` / `protected_path` naming the rule when the profile refuses a path of
 * the request. A read of what every sandbox shows to start a program (`runtime`, policy
 * widening.ts) is not refused: the kernel lets the helper read it, so refusing here would only make
 * the answer depend on `--no-precheck`.
 */
export function precheckRequest(
  paths: readonly TouchedPath[],
  profile: PermissionProfile,
  os: HostOs,
  surface: readonly SurfaceEntry[] = EXECUTABLE_SURFACE,
  runtime: HelperRuntimeReads | null = null,
): void {
  for (const { path, access } of paths) {
    const want = access === 'read' ? 'read' : 'write';
    // `C:\w\GIT~1\config` or `C:\w\.git.\config` names .git without matching any rule about it.
    if (os === 'windows') assertPlainWindowsPath(path);
    const decision = checkAccess(profile, path, want, os, surface);
    if (decision.allowed) continue;
    if (want === 'read' && runtime !== null && runtimeReadOf(profile, path, runtime) !== null) continue;
    if (!mayBePlantedLink(decision, access)) {
      throw new FsError(decision.kind, `cannot ${want} ${path}: ${decision.rule}`);
    }
  }
}

/**
 * A removal of a surface name itself is left to the helper, which sees what is there: a symlink
 * planted on `.codex` may be removed (removing a link runs nothing), anything else is refused.
 */
function mayBePlantedLink(decision: { surfaceLeaf?: true }, access: TouchedPath['access']): boolean {
  return access === 'remove' && decision.surfaceLeaf === true;
}

/**
 * The second half of the pre-check, once the sandbox is prepared: each path resolved physically
 * through its longest existing prefix (the last component of a write is not followed: the helper
 * never writes through a link there) and judged by the request's path guard, so a loop-back
 * symlink (`<root>/x -> <root>`) or a `/proc` alias gets the same early, clear refusal as the plain
 * spelling. Still an early error only: the helper checks again, at use time, where it acts.
 */
export function precheckPhysical(paths: readonly TouchedPath[], guard: PathGuard, os: HostOs): void {
  for (const { path, access } of paths) {
    const want = access === 'read' ? 'read' : 'write';
    if (os !== 'windows' && isProcfsAlias(path)) {
      throw new FsError(
        'permission_denied',
        `cannot ${want} ${path}: it names a file through a procfs alias; use the file's own path`,
      );
    }
    if (want === 'write') {
      const parent = parentPath(os, path);
      const name = splitNativePath(os, path)?.segments.at(-1);
      if (parent === null || name === undefined) continue;
      const physical = joinPath(os, realOrSelf(parent, os), name);
      const decision = decideWrite(guard, physical, os);
      if (!decision.allowed && !mayBePlantedLink(decision, access)) assertWritable(guard, physical, path, os);
    } else if (isDeniedPath(guard, realOrSelf(path, os), os)) {
      throw new FsError('permission_denied', `cannot read ${path}: it leads to a denied path`);
    }
  }
}
