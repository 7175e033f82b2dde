import { FsError } from './error-kinds.js';
import type { HostOs } from './host-os.js';
import {
  joinPath,
  parentPath,
  pathStartsWith,
  relativeSegments,
  separatorFor,
  splitNativePath,
} from './native-path.js';
import {
  isInsideSurface,
  type SurfaceEntry,
  surfaceEntryEndingAt,
  surfaceMatch,
  surfaceRule,
} from './permissions/executable-surface.js';
import { type DenyGlob, parseDenyGlob } from './permissions/glob-match.js';

/**
 * The write rules of one sandboxed request in the form the helper checks them against the
 * *physical* location of every path it creates, replaces, renames onto or removes. The broker
 * builds it from the sandbox plan and the host (see the broker's runner/path-guard.ts) and sends it
 * with the request; the helper resolves each name through its opened parent directory and asks
 * `decideWrite` about the path the kernel reports for it, so no spelling (a loop-back symlink,
 * `..`, `/proc/self/root`) can move a write onto `.git`, a denied path or the broker's own code.
 *
 * Every entry is listed under each name it has (the policy's spelling and its real path): inside
 * bwrap the kernel reports the bind's name, in-process the real one.
 */

export type GuardReason = 'writable_root' | 'read_only' | 'protected' | 'own_code' | 'denied';

export interface GuardEntry {
  /** Native absolute path (one spelling). */
  path: string;
  reason: GuardReason;
  /** What decided it, for messages ("protected metadata path .git", "denied by entry …"). */
  rule: string;
}

export interface GuardGlob {
  /** The deny pattern as the policy wrote it (absolute); the helper parses it as the broker did. */
  pattern: string;
}

/** The executable surface the helper protects below every writable root (permissions/executable-surface.ts). */
export interface GuardSurface {
  /** The fixed entries and the policy's additions, matched at any depth. */
  entries: SurfaceEntry[];
  /** The user's home (`~/` in a git config path), or null when the broker does not know it. */
  home: string | null;
}

export interface PathGuard {
  entries: GuardEntry[];
  denyGlobs: GuardGlob[];
  /** `dev:ino` (decimal) of every existing denied file: another name of one (a hard link) is refused. */
  deniedIdentities: string[];
  surface: GuardSurface;
}

export type GuardDecision =
  | { allowed: true; root: string }
  | {
      allowed: false;
      kind: 'permission_denied' | 'protected_path';
      rule: string;
      /**
       * Set when the path itself is a surface name (`.codex`, not `.codex/config.toml`): a symlink
       * planted there may be removed, since removing a link runs nothing.
       */
      surfaceLeaf?: true;
    };

/**
 * What a command's changes may do that a file method may not, when they are committed (the
 * helper's commit of a command's copy-on-write layer): leave repository data inside an existing
 * `.git` (judged by the data allowlist where the helper acts), and create a new repository in a
 * directory the policy names.
 */
export interface SurfaceExemptions {
  repositoryData?: boolean;
  /** Native paths of directories in or below which a new `.git` may be made (both spellings). */
  nestedRepositories?: readonly string[];
}

// Deepest entry wins; at equal depth the stricter one.
const STRICTNESS: Record<GuardReason, number> = {
  writable_root: 0,
  read_only: 1,
  protected: 2,
  own_code: 2,
  denied: 3,
};

function depthOf(os: HostOs, path: string): number {
  return splitNativePath(os, path)?.segments.length ?? 0;
}

// One guard is checked against every entry of a tree operation: compile its globs once.
const compiledGlobs = new WeakMap<PathGuard, Array<{ glob: GuardGlob; compiled: DenyGlob }>>();

/** The deny glob matching exactly `path` (not an ancestor), or null. */
export function globMatching(guard: PathGuard, path: string, os: HostOs): GuardGlob | null {
  if (guard.denyGlobs.length === 0) return null;
  let globs = compiledGlobs.get(guard);
  if (globs === undefined) {
    globs = guard.denyGlobs.map((glob) => ({ glob, compiled: parseDenyGlob(glob.pattern, os) }));
    compiledGlobs.set(guard, globs);
  }
  return globs.find(({ compiled }) => compiled.test(path))?.glob ?? null;
}

function deniedByGlob(guard: PathGuard, path: string, os: HostOs): GuardGlob | null {
  if (guard.denyGlobs.length === 0) return null;
  for (let p: string | null = path; p !== null; p = parentPath(os, p)) {
    const hit = globMatching(guard, p, os);
    if (hit !== null) return hit;
  }
  return null;
}

/** The entry that decides `path` (deepest, then strictest), or null when none contains it. */
function decidingEntry(guard: PathGuard, path: string, os: HostOs): GuardEntry | null {
  let best: GuardEntry | null = null;
  let bestDepth = -1;
  for (const entry of guard.entries) {
    if (!pathStartsWith(os, path, entry.path)) continue;
    const depth = depthOf(os, entry.path);
    if (
      depth > bestDepth ||
      (depth === bestDepth && best !== null && STRICTNESS[entry.reason] > STRICTNESS[best.reason])
    ) {
      best = entry;
      bestDepth = depth;
    }
  }
  return best;
}

/** Whether a write may create, replace or remove the physical path `path`. */
export function decideWrite(
  guard: PathGuard,
  path: string,
  os: HostOs,
  exemptions: SurfaceExemptions = {},
): GuardDecision {
  const glob = deniedByGlob(guard, path, os);
  if (glob !== null)
    return { allowed: false, kind: 'permission_denied', rule: `denied by glob ${glob.pattern}` };
  const entry = decidingEntry(guard, path, os);
  if (entry === null) return { allowed: false, kind: 'permission_denied', rule: 'outside writable roots' };
  switch (entry.reason) {
    case 'writable_root':
      return surfaceDecision(guard, entry.path, path, os, exemptions) ?? { allowed: true, root: entry.path };
    case 'read_only':
    case 'denied':
      return { allowed: false, kind: 'permission_denied', rule: entry.rule };
    default:
      return { allowed: false, kind: 'protected_path', rule: entry.rule };
  }
}

/** The writable root whose entry decides `path` (deepest entry), or null when another kind of entry or none does. */
export function writableRootOf(guard: PathGuard, path: string, os: HostOs): string | null {
  const entry = decidingEntry(guard, path, os);
  return entry?.reason === 'writable_root' ? entry.path : null;
}

/**
 * The surface's refusal of `path` inside the writable root `root` by name, or null. A root that
 * itself lies inside a surface name is an explicit grant: nothing below it is refused by name.
 */
function surfaceDecision(
  guard: PathGuard,
  root: string,
  path: string,
  os: HostOs,
  exemptions: SurfaceExemptions = {},
): GuardDecision | null {
  const { entries } = guard.surface;
  const rootSegments = splitNativePath(os, root)?.segments ?? [];
  if (isInsideSurface(entries, rootSegments, os)) return null;
  const below = relativeSegments(os, path, root) ?? [];
  const match = surfaceMatch(entries, below, os);
  if (match === null) return null;
  const isGit = match.entry.path === '.git';
  const leaf = match.end === below.length - 1;
  // Inside an existing `.git`, a command's git may leave repository data: the helper judges the
  // rest of the path against the allowlist where it acts (it needs the git directory itself).
  if (isGit && !leaf && exemptions.repositoryData) return null;
  if (isGit && exemptions.nestedRepositories !== undefined) {
    const holder = joinPath(os, root, ...below.slice(0, match.end));
    if (exemptions.nestedRepositories.some((allowed) => pathStartsWith(os, holder, allowed))) return null;
  }
  return {
    allowed: false,
    kind: 'protected_path',
    rule: surfaceRule(match.entry),
    ...(leaf ? { surfaceLeaf: true as const } : {}),
  };
}

/**
 * The surface's refusal of the last name of `path` alone, for a tree operation that judged every
 * ancestor of it already (it entered them): an entry whose own name ends a surface entry is
 * refused, whatever lies above. Linear in the names it looks at (a path 5 000 levels deep is
 * not split per entry); `root` is the writable root holding the tree, `granted` whether it lies
 * inside the surface (then nothing is refused by name).
 */
export function surfaceDecisionAtLeaf(
  guard: PathGuard,
  root: string,
  path: string,
  os: HostOs,
): GuardDecision | null {
  const { entries } = guard.surface;
  if (isInsideSurface(entries, splitNativePath(os, root)?.segments ?? [], os)) return null;
  const separator = separatorFor(os);
  const rootEnd = root.endsWith(separator) ? root.length - 1 : root.length;
  const deepest = Math.max(...entries.map((entry) => entry.path.split('/').length));
  // The trailing names of `path` that lie below `root`, innermost last.
  const names: string[] = [];
  let end = path.length;
  while (names.length < deepest) {
    const start = path.lastIndexOf(separator, end - 1);
    if (start < rootEnd) break;
    names.unshift(path.slice(start + 1, end));
    end = start;
  }
  const entry = surfaceEntryEndingAt(entries, names, os);
  if (entry === null) return null;
  return { allowed: false, kind: 'protected_path', rule: surfaceRule(entry), surfaceLeaf: true };
}

/**
 * Refuses (throws) a write at the physical path `physical`; `requested` is the name the request
 * used, shown when the two differ so the user sees where the write would really have gone.
 */
export function assertWritable(
  guard: PathGuard,
  physical: string,
  requested: string,
  os: HostOs,
  exemptions: SurfaceExemptions = {},
): void {
  const decision = decideWrite(guard, physical, os, exemptions);
  if (decision.allowed) return;
  const where = physical === requested ? '' : ` (it is ${physical})`;
  throw new FsError(decision.kind, `cannot write ${requested}${where}: ${decision.rule}`);
}

/** The rule denying `path` (at or below a denied entry or a deny glob: reads of it fail too), or null. */
export function denialOf(guard: PathGuard, path: string, os: HostOs): string | null {
  const glob = deniedByGlob(guard, path, os);
  if (glob !== null) return `denied by glob ${glob.pattern}`;
  const entry = decidingEntry(guard, path, os);
  return entry?.reason === 'denied' ? entry.rule : null;
}

/** True when `path` is at or below a denied entry or a deny glob (reads of it must fail too). */
export function isDeniedPath(guard: PathGuard, path: string, os: HostOs): boolean {
  return denialOf(guard, path, os) !== null;
}

/**
 * The entries strictly inside `path` that a tree operation there must not touch: anything not
 * plainly writable, and other writable roots (mount points, which cannot be removed).
 */
export function guardedInside(guard: PathGuard, path: string, os: HostOs): GuardEntry[] {
  return guard.entries.filter((entry) => {
    const below = relativeSegments(os, entry.path, path);
    return below !== null && below.length > 0;
  });
}

/** Refuses a file whose identity is that of a denied file (a hard link planted under another name). */
export function assertNotDeniedIdentity(
  guard: PathGuard | null,
  identity: { dev: bigint; ino: bigint },
  path: string,
): void {
  if (guard === null || guard.deniedIdentities.length === 0) return;
  if (guard.deniedIdentities.includes(`${identity.dev}:${identity.ino}`)) {
    throw new FsError(
      'permission_denied',
      `cannot use ${path}: it is another name (a hard link) of a denied file`,
    );
  }
}
