import type { HostOs } from '../host-os.js';
import { childPath, isAtOrBelow, parentPath, relativeSegments, splitNativePath } from '../native-path.js';
import { type PathGuard, writableRootOf } from '../path-guard.js';
import { isInsideSurface, surfaceName } from './executable-surface.js';
import {
  completesGitDirectory,
  GIT_DIRECTORY_MARKERS,
  type GitDirectoryMarker,
  type GitFileProbe,
  gitDirectoryMarker,
  isGitDirectoryLayout,
  repositoryDataDecision,
  repositoryHooksDirectories,
} from './git-surface.js';

/**
 * The part of the executable surface that depends on the files themselves (git-surface.ts), judged
 * per directory: the helper asks it where it acts (through its opened directory, so a rename of an
 * ancestor meanwhile cannot make it look at another directory), the broker for `why`. The names
 * (`.git`, `.codex`, …) are the guard's own rule (path-guard.ts decideWrite); this adds what a
 * name does not show: the git directory a path lies in whatever it is called, the hooks directory a
 * repository's config names, and a write that would complete a git directory's layout.
 *
 * Facts are gathered once per directory and derived for its subdirectories, so a tree operation
 * pays a few lookups per directory, not per file.
 */

export type SurfaceEntryKind = 'file' | 'directory' | 'symlink' | 'other';

/** What the judge asks about the disk: git's files by physical path, and entries near the directory judged. */
export interface SurfaceProbe extends GitFileProbe {
  /**
   * What the directory `levels` above the directory judged (0: itself) holds at `name`, without
   * following a link there; null when nothing.
   */
  entry(levels: number, name: string): SurfaceEntryKind | null;
}

/** The surface's facts about one physical directory. */
export interface DirectorySurface {
  readonly path: string;
  /** The writable root holding it; null where the guard alone decides (outside every root, or below an explicit grant). */
  readonly root: string | null;
  /** The innermost git directory holding it (itself included): one named `.git`, or one laid out as a git directory. */
  readonly gitDirectory: string | null;
  /** The hooks directories named by the repositories whose work tree holds it. */
  readonly hooks: readonly string[];
  /** The git directory markers it holds. */
  readonly markers: ReadonlySet<GitDirectoryMarker>;
  /** The user's home, for `~/` in a repository's config. */
  readonly home: string | null;
  /** The surface holds `.git`: a directory of that name is a git directory whatever it holds. */
  readonly gitByName: boolean;
}

/** What a command's changes may do that a file method may not (path-guard.ts SurfaceExemptions). */
export interface SurfaceJudgeExemptions {
  repositoryData?: boolean;
}

function markersOf(probe: SurfaceProbe, levels: number, only?: GitDirectoryMarker): Set<GitDirectoryMarker> {
  const present = new Set<GitDirectoryMarker>();
  for (const marker of only === undefined ? GIT_DIRECTORY_MARKERS : [only]) {
    if (probe.entry(levels, marker) !== null) present.add(marker);
  }
  return present;
}

/** Markers of a directory above the one judged: HEAD first, the rest only where it is. */
function isLaidOut(probe: SurfaceProbe, levels: number): boolean {
  if (markersOf(probe, levels, 'HEAD').size === 0) return false;
  return isGitDirectoryLayout(markersOf(probe, levels));
}

/**
 * The facts of the physical directory `directory`, from it up to the writable root holding it: the
 * innermost git directory among the directories strictly below the root (a root that is itself a
 * git directory is granted as a whole, like one inside `.git`), and the hooks directories of every
 * repository whose work tree is one of them or the root.
 */
export function surfaceOfDirectory(
  guard: PathGuard,
  directory: string,
  probe: SurfaceProbe,
  os: HostOs,
): DirectorySurface {
  const home = guard.surface.home;
  const gitByName = guard.surface.entries.some((entry) => entry.path === '.git');
  const root = writableRootOf(guard, directory, os);
  const rootSegments = root === null ? null : splitNativePath(os, root)?.segments;
  const none: DirectorySurface = {
    path: directory,
    root: null,
    gitDirectory: null,
    hooks: [],
    markers: new Set(),
    home,
    gitByName,
  };
  if (root === null || rootSegments === undefined || rootSegments === null) return none;
  if (isInsideSurface(guard.surface.entries, rootSegments, os)) return none;
  const depth = relativeSegments(os, directory, root)?.length ?? 0;
  let gitDirectory: string | null = null;
  const hooks: string[] = [];
  let current = directory;
  for (let levels = 0; levels <= depth; levels++) {
    if (levels < depth && gitDirectory === null) {
      const name = splitNativePath(os, current)?.segments.at(-1) ?? '';
      if ((gitByName && surfaceName(os, name) === '.git') || isLaidOut(probe, levels)) gitDirectory = current;
    }
    if (probe.entry(levels, '.git') !== null)
      hooks.push(...repositoryHooksDirectories(current, probe, home, os));
    current = parentPath(os, current) ?? current;
  }
  return { path: directory, root, gitDirectory, hooks, markers: markersOf(probe, 0), home, gitByName };
}

/**
 * The facts of `name`, a subdirectory of the directory `parent` describes; `probe` answers with
 * levels counted from the subdirectory, and is null for one the operation is creating (it holds
 * nothing yet).
 */
export function surfaceOfChild(
  parent: DirectorySurface,
  name: string,
  probe: SurfaceProbe | null,
  os: HostOs,
): DirectorySurface {
  const path = childPath(os, parent.path, name);
  if (parent.root === null) return { ...parent, path };
  const markers = probe === null ? new Set<GitDirectoryMarker>() : markersOf(probe, 0);
  const named = parent.gitByName && surfaceName(os, name) === '.git';
  const gitDirectory = parent.gitDirectory ?? (named || isGitDirectoryLayout(markers) ? path : null);
  const hooks =
    probe !== null && probe.entry(0, '.git') !== null
      ? [...parent.hooks, ...repositoryHooksDirectories(path, probe, parent.home, os)]
      : parent.hooks;
  return { ...parent, path, gitDirectory, hooks, markers };
}

/** The facts after the operation created `name` in the directory (a marker it made counts from then on). */
export function surfaceWithCreated(surface: DirectorySurface, name: string): DirectorySurface {
  const marker = gitDirectoryMarker(name);
  if (marker === null || surface.markers.has(marker)) return surface;
  return { ...surface, markers: new Set([...surface.markers, marker]) };
}

/** True when a directory holding these entries' markers is laid out as a git directory. */
export function isLaidOutAsGitDirectory(probe: SurfaceProbe): boolean {
  return isGitDirectoryLayout(markersOf(probe, 0));
}

/**
 * Why writing the entry `name` of the directory `surface` describes is refused, or null: inside a
 * git directory (only repository data, and only for a command's commit), completing a git
 * directory's layout (`create`: a name that is not there yet), or inside a hooks directory.
 */
export function surfaceRefusal(
  surface: DirectorySurface,
  name: string,
  verb: 'create' | 'write',
  os: HostOs,
  exemptions: SurfaceJudgeExemptions = {},
): string | null {
  if (surface.root === null) return null;
  const path = childPath(os, surface.path, name);
  if (surface.gitDirectory !== null) {
    if (!exemptions.repositoryData) {
      return `inside the git directory ${surface.gitDirectory} (git reads its config and runs its hooks)`;
    }
    const decision = repositoryDataDecision(relativeSegments(os, path, surface.gitDirectory) ?? []);
    if (!decision.allowed)
      return `not repository data of the git directory ${surface.gitDirectory}: ${decision.reason}`;
  } else if (verb === 'create' && completesGitDirectory(surface.markers, name)) {
    return `it would make ${surface.path} a git directory (HEAD beside objects and refs, or beside commondir), whose config and hooks git would run`;
  }
  const hooks = surface.hooks.find((directory) => isAtOrBelow(os, path, directory));
  if (hooks !== undefined) {
    return `inside ${hooks}, the hooks directory a repository's core.hooksPath names: git runs what it holds`;
  }
  return null;
}
