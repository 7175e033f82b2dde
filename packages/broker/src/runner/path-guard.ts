import type { BigIntStats } from 'node:fs';
import {
  decodePathBytes,
  EXECUTABLE_SURFACE,
  formatNativePath,
  GIT_CONFIG_MAX_BYTES,
  type GitFileProbe,
  type GuardEntry,
  type GuardReason,
  type HostOs,
  isAbsoluteNative,
  joinPath,
  LIMITS,
  type PathGuard,
  parentPath,
  parseDenyGlob,
  relativeSegments,
  repositoryHooksDirectories,
  type SandboxPlan,
  type SurfaceEntryKind,
  type SurfaceProbe,
  splitNativePath,
  surfaceOfDirectory,
  surfaceRefusal,
} from '@fs-sandbox/policy';
import * as host from './host-reads.js';

/**
 * Per request, the broker turns the plan and the host into (1) extra read-only paths for the
 * backend (git directories named by `.git` pointer files, the hooks directories the repositories
 * holding each writable root name, the broker's own code) and (2) the path guard the helper checks
 * physical locations against (policy path-guard.ts). Both read the host now, not when the plan was
 * cached: a `.git` file or a repository's config may have been written since.
 */

/** Why an extra read-only path is protected, for the guard's refusal. */
interface Protection {
  reason: Extract<GuardReason, 'protected' | 'own_code'>;
  rule: string;
}

export interface HostProtections {
  /** The plan with the extra paths added to their writable roots' read-only subpaths. */
  plan: SandboxPlan;
  /** The added paths (each as its writable root spells it) and why. */
  extra: ReadonlyMap<string, Protection>;
  /**
   * Paths the guard protects that nothing can be mounted on: a missing git directory a pointer
   * names (creating it would create the repository), and the symlinks on the way to one (re-pointing
   * one would swap the repository for another).
   */
  unmounted: ReadonlyMap<string, Protection>;
  /** The user's home (a git config's `~/`), or null when the environment does not say. */
  home: string | null;
}

// A `.git` file or `commondir` holds one short line; anything longer is not a pointer git wrote.
const POINTER_MAX_BYTES = 4096;

export function protectHostPaths(
  plan: SandboxPlan,
  ownCode: readonly string[],
  os: HostOs,
  env: Record<string, string | undefined> = process.env,
): HostProtections {
  const home = host.variable(env, os === 'windows' ? 'USERPROFILE' : 'HOME') ?? null;
  const extra = new Map<string, Protection>();
  const roots = plan.writableRoots.map((root) => ({ root: root.root, real: realOrSelf(root.root, os) }));
  /** The path as the deepest writable root containing it spells it, or null when none does. */
  const inRoot = (real: string): string | null => {
    let best: { path: string; depth: number } | null = null;
    for (const { root, real: rootReal } of roots) {
      const below = relativeSegments(os, real, rootReal);
      if (below === null) continue;
      const depth = splitNativePath(os, rootReal)?.segments.length ?? 0;
      if (best === null || depth > best.depth) best = { path: joinPath(os, root, ...below), depth };
    }
    return best?.path ?? null;
  };
  for (const path of ownCode) {
    const spelled = inRoot(path);
    if (spelled !== null)
      extra.set(spelled, { reason: 'own_code', rule: "part of fs-sandbox's own installation" });
  }
  const unmounted = new Map<string, Protection>();
  for (const root of plan.writableRoots) {
    if (!root.protectedNames.includes('.git')) continue;
    const dotGit = joinPath(os, root.root, '.git');
    const protection: Protection = {
      reason: 'protected',
      rule: `git directory named by ${dotGit} (protected like .git itself)`,
    };
    for (const target of gitPointerTargets(dotGit, os)) {
      const mounted = target.real === null ? null : inRoot(target.real);
      if (mounted !== null && !extra.has(mounted)) extra.set(mounted, protection);
      for (const path of [target.spelled, ...target.links]) {
        if (path !== mounted) unmounted.set(path, protection);
      }
    }
  }
  // A surface name that is a symlink (`.codex -> config/codex`) makes its target what Codex, git or
  // an agent reads: the target is protected like the name itself.
  for (const root of plan.writableRoots) {
    for (const name of root.protectedNames) {
      const link = joinPath(os, root.root, name);
      if (!isSymlink(link)) continue;
      const target = realOrSelf(link, os);
      const spelled = inRoot(target);
      // A target outside every writable root cannot be written anyway.
      if (spelled === null) continue;
      const protection: Protection = {
        reason: 'protected',
        rule: `target of the symlink ${link} (protected like ${name} itself)`,
      };
      if (existingDirectory(target)) {
        if (!extra.has(spelled)) extra.set(spelled, protection);
      } else unmounted.set(target, protection);
    }
  }
  for (const { directory, repository } of hooksDirectoriesOfRoots(plan, home, os)) {
    const protection: Protection = {
      reason: 'protected',
      rule: `hooks directory of the repository at ${repository} (core.hooksPath): git runs what it holds`,
    };
    const real = realOrSelf(directory, os);
    const mounted = existingDirectory(real) ? inRoot(real) : null;
    if (mounted !== null && !extra.has(mounted)) extra.set(mounted, protection);
    if (mounted !== directory) unmounted.set(directory, protection);
  }
  if (extra.size === 0) return { plan, extra, unmounted, home };
  const writableRoots = plan.writableRoots.map((root) => {
    const added = [...extra.keys()].filter((path) => owningRoot(plan, path, os) === root.root);
    return added.length === 0
      ? root
      : { ...root, readOnlySubpaths: [...new Set([...root.readOnlySubpaths, ...added])].sort() };
  });
  return { plan: { ...plan, writableRoots }, extra, unmounted, home };
}

// How the broker reads a repository's files (host reads, journaled), following symlinks as git does.
export const GIT_FILE_PROBE: GitFileProbe = {
  kind(path) {
    try {
      const stats = host.stat(path);
      return stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
    } catch {
      return null;
    }
  },
  read: (path) => readSmallRegularFile(path, GIT_CONFIG_MAX_BYTES),
};

/**
 * The hooks directories (`core.hooksPath`) named by the repositories whose work tree holds a
 * writable root: the root's own repository and those of its ancestors (a workspace opened in a
 * repository's subdirectory). The helper finds the repositories inside a root where it acts; these
 * it may not see. A root inside the surface (an explicit grant) has none.
 */
function hooksDirectoriesOfRoots(
  plan: SandboxPlan,
  home: string | null,
  os: HostOs,
): Array<{ directory: string; repository: string }> {
  const found: Array<{ directory: string; repository: string }> = [];
  const seen = new Set<string>();
  for (const root of plan.writableRoots) {
    if (root.protectedNames.length === 0) continue;
    for (let worktree: string | null = root.root; worktree !== null; worktree = parentPath(os, worktree)) {
      if (seen.has(worktree)) break;
      seen.add(worktree);
      if (GIT_FILE_PROBE.kind(joinPath(os, worktree, '.git')) === null) continue;
      for (const directory of repositoryHooksDirectories(worktree, GIT_FILE_PROBE, home, os))
        found.push({ directory, repository: worktree });
    }
  }
  return found;
}

/**
 * Why the executable surface refuses a write at the physical path `target`, judged on the host's
 * files as the helper judges them where it acts (for `why`): a git directory whatever its name, a
 * hooks directory, a write completing a git directory's layout. Null when it does not.
 */
export function hostSurfaceRefusal(guard: PathGuard, target: string, os: HostOs): string | null {
  const directory = parentPath(os, target);
  const name = splitNativePath(os, target)?.segments.at(-1);
  if (directory === null || name === undefined) return null;
  const probe: SurfaceProbe = {
    ...GIT_FILE_PROBE,
    entry(levels, entryName) {
      let at = directory;
      for (let level = 0; level < levels; level++) at = parentPath(os, at) ?? at;
      try {
        const stats = host.lstat(joinPath(os, at, entryName));
        const kind: SurfaceEntryKind = stats.isSymbolicLink()
          ? 'symlink'
          : stats.isDirectory()
            ? 'directory'
            : stats.isFile()
              ? 'file'
              : 'other';
        return kind;
      } catch {
        return null;
      }
    },
  };
  const verb = probe.entry(0, name) === null ? 'create' : 'write';
  return surfaceRefusal(surfaceOfDirectory(guard, directory, probe, os), name, verb, os);
}

function isSymlink(path: string): boolean {
  try {
    return host.lstat(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function existingDirectory(path: string): boolean {
  try {
    return host.stat(path).isDirectory();
  } catch {
    return false;
  }
}

function owningRoot(plan: SandboxPlan, path: string, os: HostOs): string | null {
  let best: string | null = null;
  for (const { root } of plan.writableRoots) {
    if (relativeSegments(os, path, root) === null) continue;
    if (best === null || root.length > best.length) best = root;
  }
  return best;
}

/** A directory a git pointer names: as spelled, where it really is (null: missing), and the links on the way. */
interface PointerTarget {
  spelled: string;
  real: string | null;
  /** Each symlink resolving `spelled` crosses, under both of its names (as spelled, physically). */
  links: string[];
}

/**
 * A `.git` that is a file (`gitdir: <path>`, as worktrees and submodules write it) makes the
 * directory it names the repository: its `config` and `hooks` steer git exactly like `.git/`'s.
 * That directory is protected, and so is the `commondir` a linked worktree's git directory names,
 * whether they exist or not (creating a missing one creates the repository) and along every
 * symlink of their spelling (re-pointing one swaps the repository for another).
 */
function gitPointerTargets(dotGit: string, os: HostOs): PointerTarget[] {
  const gitdir = pointerTarget(dotGit, 'gitdir:', parentPath(os, dotGit) ?? dotGit, os);
  if (gitdir === null) return [];
  const commondir =
    gitdir.real === null
      ? null
      : pointerTarget(joinPath(os, gitdir.real, 'commondir'), '', gitdir.spelled, os);
  return commondir === null ? [gitdir] : [gitdir, commondir];
}

/** What a pointer file names (`prefix` then a path, relative to `base`), or null when it names nothing. */
function pointerTarget(file: string, prefix: string, base: string, os: HostOs): PointerTarget | null {
  const text = readSmallRegularFile(file);
  if (text === null) return null;
  const line = text.split('\n')[0]?.trim() ?? '';
  if (!line.startsWith(prefix)) return null;
  const named = line.slice(prefix.length).trim();
  if (named === '') return null;
  const spelled = isAbsoluteNative(os, named) ? joinPath(os, named) : joinPath(os, base, named);
  let real: string | null = null;
  try {
    const resolved = decodePathBytes(host.realpath(spelled));
    if (host.lstat(resolved).isDirectory()) real = resolved;
  } catch {
    // Missing: still protected by its spelling.
  }
  return { spelled, real, links: symlinksOnTheWay(spelled, os) };
}

function symlinksOnTheWay(path: string, os: HostOs): string[] {
  const links: string[] = [];
  for (let current: string | null = path; current !== null; current = parentPath(os, current)) {
    try {
      if (!host.lstat(current).isSymbolicLink()) continue;
    } catch {
      continue;
    }
    links.push(current);
    const parent = parentPath(os, current);
    const name = splitNativePath(os, current)?.segments.at(-1);
    if (parent !== null && name !== undefined) links.push(joinPath(os, realOrSelf(parent, os), name));
  }
  return [...new Set(links)];
}

function readSmallRegularFile(path: string, maxBytes = POINTER_MAX_BYTES): string | null {
  try {
    if (!host.stat(path).isFile()) return null;
    return host.readHead(path, maxBytes).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * The path with its longest existing prefix resolved physically (what the kernel would walk to).
 * On Windows this also turns 8.3 short names into the long ones the helper's realpath reports.
 */
export function realOrSelf(path: string, os: HostOs): string {
  const split = splitNativePath(os, path);
  if (split === null) return path;
  // Split once: the prefixes are cut from its segments, so a path of many missing components costs
  // one formatting per step, not another split of the whole path.
  const { root, segments } = split;
  for (let kept = segments.length; kept >= 0; kept--) {
    const current =
      kept === segments.length ? path : formatNativePath(os, { root, segments: segments.slice(0, kept) });
    try {
      const real = decodePathBytes(host.realpath(current));
      return kept === segments.length ? real : joinPath(os, real, ...segments.slice(kept));
    } catch {
      // Missing (or not resolvable): try its parent.
    }
  }
  return path;
}

/**
 * The guard for a plan: every writable root, read-only and denied path and protected name, under
 * its policy spelling and its real one; the deny globs as regular expressions; and the identity of
 * every existing denied file (`denyGlobMatches` are the files the backend masked for the globs).
 */
export function buildPathGuard(
  plan: SandboxPlan,
  host: Pick<HostProtections, 'extra' | 'unmounted' | 'home'>,
  denyGlobMatches: readonly string[],
): PathGuard {
  const { extra } = host;
  const os = plan.os;
  const entries: GuardEntry[] = [];
  const add = (path: string, reason: GuardReason, rule: string): void => {
    entries.push({ path, reason, rule });
    const real = realOrSelf(path, os);
    if (real !== path) entries.push({ path: real, reason, rule });
  };
  // The surface's names (`.git`, `.codex`, …) are not entries: the guard matches them at any depth.
  for (const root of plan.writableRoots) {
    add(root.root, 'writable_root', 'writable root');
    for (const path of root.readOnlySubpaths) {
      const protection = extra.get(path);
      add(path, protection?.reason ?? 'read_only', protection?.rule ?? `read-only entry ${path}`);
    }
  }
  for (const [path, protection] of host.unmounted) add(path, protection.reason, protection.rule);
  const denied = [...plan.deniedPaths, ...(plan.unshownDeniedPaths ?? [])];
  for (const path of denied) add(path, 'denied', `denied path ${path}`);
  return {
    entries,
    // Parsed here so a pattern that cannot be enforced fails before anything runs; the helper
    // parses the same text with the same parser.
    denyGlobs: plan.denyGlobs.map((pattern) => ({ pattern: parseDenyGlob(pattern, os).pattern })),
    deniedIdentities: deniedFileIdentities([...denied, ...denyGlobMatches], os),
    surface: { entries: plan.surface ?? [...EXECUTABLE_SURFACE], home: host.home },
  };
}

/**
 * `dev:ino` of the denied files another name could reach: every file a denied path or glob match
 * names itself (a hard link to it may be made while the request runs), and every file below a
 * denied directory that already has another name. The walk is bounded
 * (LIMITS.deniedIdentityScanEntries); past the bound the rest is not collected (README, known limits).
 */
function deniedFileIdentities(paths: readonly string[], os: HostOs): string[] {
  const identities = new Set<string>();
  const pending = paths.map((path) => ({ path, named: true }));
  for (let seen = 0; pending.length > 0 && seen < LIMITS.deniedIdentityScanEntries; seen++) {
    const { path, named } = pending.pop() as { path: string; named: boolean };
    let stats: BigIntStats;
    try {
      stats = host.lstatBigint(path);
    } catch {
      continue;
    }
    if (stats.isFile() && (named || stats.nlink > 1n)) identities.add(`${stats.dev}:${stats.ino}`);
    if (!stats.isDirectory()) continue;
    try {
      for (const { name } of host.readdirTyped(path)) {
        pending.push({ path: joinPath(os, path, decodePathBytes(name)), named: false });
      }
    } catch {
      // Unreadable: nothing below it can be listed by the broker either.
    }
  }
  return [...identities].sort();
}
