import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import { windowsComparableName } from '../native-path.js';

/**
 * The executable surface: what, written by an agent, becomes code the host runs later without
 * anyone asking — git runs a repository's config (`core.fsmonitor`, `core.pager`, aliases, filter
 * drivers) and hooks on the next `git status` or `git commit`, and an IDE runs `git status` in every
 * repository it finds under an opened folder; Codex loads a project's `.codex/config.toml`; agents
 * load skills and instructions from `.agents/`. These names are protected at ANY depth below every
 * writable root (a nested `vendor/lib/.git` is a repository as much as the workspace's own), for
 * every write path: creating, replacing, renaming onto or writing inside one is `protected_path`.
 *
 * The fixed list is here, each entry with its reason; a policy may add names or relative paths
 * (`.vscode/tasks.json`, `.envrc`), never remove one. What git makes executable beyond a name — a
 * directory laid out as a git directory (a gitfile's `gitdir:` target, a bare repository) and the
 * directory a repository's `core.hooksPath` names — is judged by git-surface.ts on the files
 * themselves.
 */
export interface SurfaceEntry {
  /** Relative path, `/`-separated: one name (`.git`) or a name below a directory (`.vscode/tasks.json`). */
  readonly path: string;
  /** Why writing it runs code on the host. */
  readonly reason: string;
}

export const EXECUTABLE_SURFACE: readonly SurfaceEntry[] = [
  {
    path: '.git',
    reason: "git runs a repository's config and hooks on the host, and a gitfile names another git directory",
  },
  { path: '.agents', reason: 'agents load skills and instructions from it' },
  { path: '.codex', reason: 'Codex loads its project configuration from it' },
  {
    path: 'fs-sandbox.toml',
    reason:
      'fs-sandbox reads its policy from it (--find-policy looks in every directory up from the cwd): rewritten, it would widen the next sandbox',
  },
];

/** The reason an entry a policy added carries. */
export const POLICY_SURFACE_REASON = 'protected by the policy';

/** Entries a policy may add, and the bytes of one. */
export const SURFACE_EXTENSION_MAX_ENTRIES = 64;
export const SURFACE_EXTENSION_MAX_BYTES = 256;

/** Why a policy's surface entry cannot be used, or null when it can. */
export function surfaceEntryProblem(path: string): string | null {
  if (path.length === 0 || Buffer.byteLength(path) > SURFACE_EXTENSION_MAX_BYTES)
    return `must be 1 to ${SURFACE_EXTENSION_MAX_BYTES} bytes`;
  if (path.includes('\0')) return 'must not contain NUL';
  if (path.includes('\\')) return 'must use / between names';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'must be a relative path of plain names (no leading or doubled /, no . or ..)';
  return null;
}

/** The fixed surface plus the policy's additions (checked, deduplicated; the fixed reasons kept). */
export function executableSurface(additions: readonly string[] = []): SurfaceEntry[] {
  if (additions.length > SURFACE_EXTENSION_MAX_ENTRIES) {
    throw new FsError(
      'invalid_params',
      `a policy may add at most ${SURFACE_EXTENSION_MAX_ENTRIES} entries to the protected surface`,
    );
  }
  const entries: SurfaceEntry[] = [...EXECUTABLE_SURFACE];
  for (const path of additions) {
    const problem = surfaceEntryProblem(path);
    if (problem !== null)
      throw new FsError('invalid_params', `protected surface entry ${JSON.stringify(path)} ${problem}`);
    if (!entries.some((entry) => entry.path === path)) entries.push({ path, reason: POLICY_SURFACE_REASON });
  }
  return entries;
}

/**
 * A name as the surface compares it: case folded on every OS. Linux file systems are mostly
 * case-sensitive, but not all (an ext4 casefold directory, vfat, a share), and a tree written on
 * Linux is often read on macOS or Windows, where `.GIT` is `.git`; nothing legitimate needs a
 * `.Git` directory. On Windows a trailing dot or space is dropped as the OS drops it.
 */
export function surfaceName(os: HostOs, name: string): string {
  return (os === 'windows' ? windowsComparableName(name) : name).toLowerCase();
}

/** One surface entry found in a path: which, and at which segment it ends (its last name's index). */
export interface SurfaceMatch {
  entry: SurfaceEntry;
  /** Index in the searched segments of the entry's last name. */
  end: number;
}

/**
 * The first surface entry the names `segments` (below a writable root) pass through: the entry's
 * names appear consecutively at any depth, and everything below them is inside it.
 */
export function surfaceMatch(
  entries: readonly SurfaceEntry[],
  segments: readonly string[],
  os: HostOs,
): SurfaceMatch | null {
  const folded = segments.map((segment) => surfaceName(os, segment));
  for (let end = 0; end < folded.length; end++) {
    for (const entry of entries) {
      const names = entry.path.split('/');
      const start = end - names.length + 1;
      if (start < 0) continue;
      if (names.every((name, index) => folded[start + index] === surfaceName(os, name)))
        return { entry, end };
    }
  }
  return null;
}

/** The surface entry whose names are the last of `segments` (the path itself is one), or null. */
export function surfaceEntryEndingAt(
  entries: readonly SurfaceEntry[],
  segments: readonly string[],
  os: HostOs,
): SurfaceEntry | null {
  const folded = segments.map((segment) => surfaceName(os, segment));
  return (
    entries.find((entry) => {
      const names = entry.path.split('/');
      const start = folded.length - names.length;
      return start >= 0 && names.every((name, index) => folded[start + index] === surfaceName(os, name));
    }) ?? null
  );
}

/** The rule text of a match (`protected metadata path .git (…)`), shown in every refusal. */
export function surfaceRule(entry: SurfaceEntry): string {
  return `protected metadata path ${entry.path} (${entry.reason})`;
}

/**
 * True when a writable root lies inside a surface entry (`<repo>/.git/objects` granted by name):
 * the explicit grant that lifts the surface's protection below it.
 */
export function isInsideSurface(
  entries: readonly SurfaceEntry[],
  rootSegments: readonly string[],
  os: HostOs,
): boolean {
  return surfaceMatch(entries, rootSegments, os) !== null;
}
