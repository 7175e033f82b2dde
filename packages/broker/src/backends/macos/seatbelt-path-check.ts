import { realpath } from 'node:fs/promises';
import { basename } from 'node:path';
import { FsError, joinPath, parentPath, type SandboxPlan } from '@fs-sandbox/policy';
import type { HelperRuntime } from '../backend.js';
import { apfsPathIsInside, sameApfsPath } from './apfs-names.js';
import { resolveMacosTopLevelAlias } from './macos-path-aliases.js';

export interface PathCheckDeps {
  /** Resolves symlinks of an existing path; rejects when the path does not exist. */
  realpath(path: string): Promise<string>;
  /** The spelling the profile will use for a path (top-level aliases resolved). */
  profileSpelling(path: string): string;
}

const DEFAULT_DEPS: PathCheckDeps = {
  realpath: (path) => realpath(path),
  profileSpelling: resolveMacosTopLevelAlias,
};

/**
 * Seatbelt compares rules with the path the kernel resolved, while the plan speaks of paths as the
 * caller spelled them. This reconciles the two before the pure profile builder runs:
 * - a writable root, or a read-only / protected / denied path inside one, that crosses a symlink
 *   is refused: the sandboxed helper can write there, so it could re-point the link after the
 *   check and the rule would then guard the wrong directory;
 * - a readable root or a denied path outside every writable root that crosses a symlink is kept
 *   and its resolved form is added (nothing in the sandbox can change that link), so both the
 *   spelled and the resolved path get the rule.
 */
export async function reconcileSeatbeltPaths(
  plan: SandboxPlan,
  runtime: HelperRuntime,
  deps: PathCheckDeps = DEFAULT_DEPS,
): Promise<{ plan: SandboxPlan; runtime: HelperRuntime }> {
  const resolved = async (path: string) => resolveLongestExisting(path, deps.realpath);
  const crossesSymlink = async (path: string) => {
    const real = await resolved(path);
    // APFS compares names case- and normalisation-insensitively: a different spelling of the same
    // name is not a symlink.
    return sameApfsPath(real, deps.profileSpelling(path)) ? null : real;
  };

  for (const writable of plan.writableRoots) {
    const rootTarget = await crossesSymlink(writable.root);
    if (rootTarget !== null) {
      throw new FsError(
        'sandbox_unavailable',
        `writable root ${writable.root} resolves through a symlink to ${rootTarget}; Seatbelt matches resolved paths, so the sandbox refuses a writable root that is not its own real path`,
      );
    }
    // The surface's names are not among them: a symlink planted on one (`.codex -> /usr`) would
    // refuse every sandbox of the workspace, and the helper's guard refuses writes there by name.
    const keptOut = [
      ...writable.readOnlySubpaths,
      ...plan.deniedPaths.filter((path) => apfsPathIsInside(path, writable.root)),
    ];
    for (const path of keptOut) {
      const target = await crossesSymlink(path);
      if (target !== null) {
        throw new FsError(
          'sandbox_unavailable',
          `${path} lies in writable root ${writable.root} and resolves through a symlink to ${target}; the sandboxed helper could re-point that link, so the sandbox refuses to build`,
        );
      }
    }
  }

  const withResolved = async (paths: string[]) => {
    const out = [...paths];
    for (const path of paths) {
      const target = await crossesSymlink(path);
      if (target !== null && !out.includes(target)) out.push(target);
    }
    return out;
  };
  return {
    plan: {
      ...plan,
      readableRoots: await withResolved(plan.readableRoots),
      deniedPaths: await withResolved(plan.deniedPaths),
    },
    runtime: {
      ...runtime,
      executable: { ...runtime.executable, path: await resolved(runtime.executable.path) },
      helperBundle: await resolved(runtime.helperBundle),
      ripgrepPath: runtime.ripgrepPath === null ? null : await resolved(runtime.ripgrepPath),
    },
  };
}

/** The real path of the longest existing prefix, with the missing rest appended unchanged. */
async function resolveLongestExisting(
  path: string,
  resolve: (path: string) => Promise<string>,
): Promise<string> {
  try {
    return await resolve(path);
  } catch {
    const parent = parentPath('macos', path);
    if (parent === null) return path;
    return joinPath('macos', await resolveLongestExisting(parent, resolve), basename(path));
  }
}
