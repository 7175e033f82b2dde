import { type Dirent, lstatSync, readdirSync, rmSync } from 'node:fs';
import type { SandboxPlan } from '@fs-sandbox/policy';
import {
  configPath,
  EXECUTABLE_SURFACE,
  FsError,
  type GitDirectoryMarker,
  gitDirectoryMarker,
  gitfileTarget,
  isGitDirectoryLayout,
  joinPath,
  LIMITS,
  pathStartsWith,
  repositoryDataDecision,
  repositoryHooksDirectories,
  type SurfaceEntry,
  surfaceEntryEndingAt,
  surfaceName,
  surfaceRule,
} from '@fs-sandbox/policy/core';
import { GIT_FILE_PROBE } from './path-guard.js';

/**
 * The executable surface (policy executable-surface.ts, git-surface.ts) for a command, which writes
 * through the kernel, not through the helper's guard. Two halves:
 *
 * - Before it starts, a scan of every writable root finds what exists: each git directory (`.git`,
 *   or a directory laid out as one), gitfile, `.codex`, `.agents` and policy entry, at any depth.
 *   The launch binds read-only what steers or runs code — a git directory's every entry that is
 *   not repository data (config, hooks, info, commondir, modules, worktrees…), a gitfile, `.codex`,
 *   `.agents`, a nested repository's core.hooksPath directory — and binds each git directory onto
 *   itself (it cannot be renamed away). The objects, refs, index, HEAD and logs stay writable, so
 *   `git add` and `git commit` inside the command land in the host's repository.
 * - When it has exited (its pid namespace is gone, nothing of it still writes), a second scan
 *   removes what it made that the surface refuses: a new `.git`, `.codex`, `.agents` or git
 *   directory anywhere, a new entry of an existing git directory that is not repository data (a
 *   `commondir`, a `hooks` where there was none, a lock left behind). Each removal is reported on
 *   the command's stderr, never dropped silently. Entries are told apart by identity (device and
 *   inode), so a repository the command only moved is not taken for a new one.
 *
 * What the second half removes exists on the host while the command runs: a host process reading
 * it meanwhile (an IDE's `git status` in a repository the command just made) reads it. The kernel
 * half has no such window. docs/security.md says both.
 */

interface Found {
  id: string;
  rule: string;
}

interface Scan {
  /** Every surface entry by path: its identity and the rule that protects it. */
  found: Map<string, Found>;
  /** Git directories: named `.git`, laid out as one, or named by a gitfile inside a root. */
  gitDirectories: Set<string>;
  /** Directories holding a `.git` (work trees whose config may name a hooks directory). */
  worktrees: Set<string>;
  /** True when the walk stopped at LIMITS.commandSurfaceScanEntries. */
  truncated: boolean;
}

export interface CommandSurface {
  /** The plan with each writable root's `commandSurface` mounts. */
  plan: SandboxPlan;
  /** After the command has exited: removes what it left that the surface refuses; one line per removal. */
  sweep(): string[];
}

const LAYOUT_RULE =
  'a git directory (HEAD beside objects and refs, or beside commondir): git runs its config and hooks';

/**
 * Scans the plan's writable roots (all but those lying inside the surface: an explicit grant) and
 * returns the plan with what the command's launch binds. Refuses (`sandbox_unavailable`) a tree
 * too large to scan or holding too many repositories, rather than run a command it cannot sweep.
 */
export function prepareCommandSurface(plan: SandboxPlan, home: string | null): CommandSurface {
  const entries = plan.surface ?? [...EXECUTABLE_SURFACE];
  const roots = plan.writableRoots.filter((root) => root.protectedNames.length > 0).map((root) => root.root);
  const before = scan(roots, entries);
  if (before.truncated) {
    throw new FsError(
      'sandbox_unavailable',
      `the writable roots hold more than ${LIMITS.commandSurfaceScanEntries} entries: a command's new .git, .codex and .agents could not be found after it; narrow the writable roots`,
      { kind: 'sandboxPreparation' },
    );
  }
  if (before.gitDirectories.size > LIMITS.commandSurfaceRepositories) {
    throw new FsError(
      'sandbox_unavailable',
      `the writable roots hold ${before.gitDirectories.size} git directories, more than the ${LIMITS.commandSurfaceRepositories} whose config and hooks a command's sandbox binds read-only; narrow the writable roots`,
      { kind: 'sandboxPreparation' },
    );
  }
  // The entries each git directory (and its objects/info) held: what appears later is judged.
  const listed = new Map<string, ReadonlySet<string>>();
  const readOnly = new Set<string>();
  for (const directory of before.gitDirectories) {
    for (const [place, prefix] of dataPlaces(directory)) {
      const names = listNames(place);
      listed.set(place, new Set(names));
      for (const name of names) {
        // A lock of a git running on the host now: binding it would keep it for ever.
        if (name.endsWith('.lock')) continue;
        if (!repositoryDataDecision([...prefix, name]).allowed) readOnly.add(joinPath('linux', place, name));
      }
    }
  }
  for (const [path] of before.found) {
    const kind = kindOf(path);
    // A link on a surface name is not mounted (mounting would follow it); it is kept as it is.
    if (kind === 'file' || (kind === 'directory' && !before.gitDirectories.has(path))) readOnly.add(path);
  }
  for (const worktree of before.worktrees) {
    for (const hooks of repositoryHooksDirectories(worktree, GIT_FILE_PROBE, home, 'linux')) {
      if (kindOf(hooks) === 'directory') readOnly.add(hooks);
    }
  }
  const ownerOf = (path: string): string | undefined =>
    roots
      .filter((root) => root !== path && pathStartsWith('linux', path, root))
      .sort((a, b) => b.length - a.length)[0];
  const writableRoots = plan.writableRoots.map((root) => {
    if (root.protectedNames.length === 0) return root;
    const mine = (paths: Iterable<string>) => [...paths].filter((path) => ownerOf(path) === root.root).sort();
    return { ...root, commandSurface: { readOnly: mine(readOnly), pinned: mine(before.gitDirectories) } };
  });
  return {
    plan: { ...plan, writableRoots },
    sweep: () => sweep(roots, entries, plan.nestedRepositories ?? [], before, listed),
  };
}

/** The places in a git directory where data and non-data sit side by side: itself and objects/info. */
function dataPlaces(directory: string): Array<[string, string[]]> {
  return [
    [directory, []],
    [joinPath('linux', directory, 'objects', 'info'), ['objects', 'info']],
  ];
}

function sweep(
  roots: string[],
  entries: SurfaceEntry[],
  allowed: readonly string[],
  before: Scan,
  listed: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const lines: string[] = [];
  const known = new Set([...before.found.values()].map((found) => found.id));
  const after = scan(roots, entries);
  const remove = (path: string, why: string): void => {
    try {
      rmSync(path, { recursive: true, force: true });
      lines.push(`fs-sandbox: removed ${path}, which the command made: ${why}`);
    } catch (error) {
      lines.push(`fs-sandbox: could not remove ${path}, which the command made (${why}): ${String(error)}`);
    }
  };
  /** Removes what a git directory gained that is not repository data (all of it when `all`, for a new one). */
  const clean = (directory: string, all: boolean): void => {
    for (const [place, prefix] of dataPlaces(directory)) {
      const had = all ? new Set<string>() : (listed.get(place) ?? new Set<string>());
      for (const name of listNames(place)) {
        if (had.has(name)) continue;
        const decision = repositoryDataDecision([...prefix, name]);
        if (!decision.allowed)
          remove(joinPath('linux', place, name), `not repository data: ${decision.reason}`);
      }
    }
  };
  const fresh = [...after.found].filter(([, found]) => !known.has(found.id));
  for (const [path, found] of fresh) {
    // Inside a new entry removed already.
    if (fresh.some(([other]) => other !== path && pathStartsWith('linux', path, other))) continue;
    const isGit =
      after.gitDirectories.has(path) || surfaceName('linux', path.split('/').at(-1) ?? '') === '.git';
    if (isGit && allowed.some((directory) => pathStartsWith('linux', path, directory))) {
      // The policy lets a command make a repository here: its data stays, what git would run goes.
      if (after.gitDirectories.has(path)) clean(path, true);
      lines.push(
        `fs-sandbox: kept the new repository ${path} (the policy allows one there), without its config and hooks`,
      );
      continue;
    }
    remove(
      path,
      isGit
        ? `${found.rule}; a command may leave a new git repository only where the policy allows one (allow_nested_repositories)`
        : found.rule,
    );
  }
  for (const directory of before.gitDirectories) clean(directory, false);
  if (after.truncated)
    lines.push(
      `fs-sandbox: the writable roots now hold more than ${LIMITS.commandSurfaceScanEntries} entries; what the command made past them was not checked for .git, .codex or .agents`,
    );
  return lines.map((line) => `${line}\n`);
}

function scan(roots: readonly string[], entries: SurfaceEntry[]): Scan {
  const result: Scan = {
    found: new Map(),
    gitDirectories: new Set(),
    worktrees: new Set(),
    truncated: false,
  };
  const deepest = Math.max(...entries.map((entry) => entry.path.split('/').length));
  let budget = LIMITS.commandSurfaceScanEntries;
  const pending: Array<{ directory: string; segments: string[] }> = roots.map((root) => ({
    directory: root,
    segments: [],
  }));
  while (pending.length > 0) {
    const { directory, segments } = pending.pop() as { directory: string; segments: string[] };
    let listing: Dirent[];
    try {
      listing = readdirSync(directory, { withFileTypes: true });
    } catch {
      continue; // Unreadable or gone: the command, running as the same user, could not list it either.
    }
    budget -= listing.length;
    if (budget < 0) {
      result.truncated = true;
      return result;
    }
    const markers = new Set<GitDirectoryMarker>();
    for (const dirent of listing) {
      const marker = gitDirectoryMarker(dirent.name);
      if (marker !== null) markers.add(marker);
    }
    if (segments.length > 0 && isGitDirectoryLayout(markers)) {
      result.found.set(directory, { id: identity(directory), rule: LAYOUT_RULE });
      result.gitDirectories.add(directory);
      continue;
    }
    for (const dirent of listing) {
      const path = joinPath('linux', directory, dirent.name);
      const below = [...segments, dirent.name];
      const entry = surfaceEntryEndingAt(entries, below.slice(-deepest), 'linux');
      if (entry !== null) {
        result.found.set(path, { id: identity(path), rule: surfaceRule(entry) });
        if (surfaceName('linux', dirent.name) === '.git') {
          result.worktrees.add(directory);
          if (dirent.isDirectory()) result.gitDirectories.add(path);
          else if (dirent.isFile()) {
            const target = gitfileTarget(GIT_FILE_PROBE.read(path) ?? '');
            const named = target === null ? null : configPath(target, directory, null, 'linux');
            if (
              named !== null &&
              kindOf(named) === 'directory' &&
              roots.some((root) => pathStartsWith('linux', named, root))
            )
              result.gitDirectories.add(named);
          }
        }
        continue;
      }
      if (dirent.isDirectory()) pending.push({ directory: path, segments: below });
    }
  }
  return result;
}

function identity(path: string): string {
  try {
    const stats = lstatSync(path, { bigint: true });
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return `missing:${path}`;
  }
}

function kindOf(path: string): 'file' | 'directory' | 'link' | 'other' | null {
  try {
    const stats = lstatSync(path);
    return stats.isSymbolicLink()
      ? 'link'
      : stats.isDirectory()
        ? 'directory'
        : stats.isFile()
          ? 'file'
          : 'other';
  } catch {
    return null;
  }
}

function listNames(directory: string): string[] {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}
