import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import {
  formatNativePath,
  normalizeNativePath,
  pathStartsWith,
  relativeSegments,
  type SplitNativePath,
  splitNativePath,
  splitStartsWith,
} from '../native-path.js';
import { rootOnlySecrets } from '../platform-roots.js';
import {
  type Access,
  type FileSystemEntry,
  isRestrictedProfile,
  type PermissionProfile,
} from '../schemas/sandbox-context.js';
import { type EntryScope, entryLabel, entryScope } from './entry-scope.js';
import {
  EXECUTABLE_SURFACE,
  isInsideSurface,
  type SurfaceEntry,
  surfaceMatch,
  surfaceRule,
} from './executable-surface.js';
import { globDeniesPath } from './glob-match.js';

/**
 * Access resolution: among the entries whose root contains the path (whole segments),
 * the deepest wins; ties go deny > write > read; no match is deny. A deny glob that matches the
 * path or an ancestor is decisive. Profiles that are not managed+restricted allow writes anywhere.
 */

export interface AccessDecision {
  access: Access;
  /** Label of the deciding entry (e.g. "file:///w/.env:deny"), null when nothing matched. */
  entry: string | null;
}

interface Decision extends AccessDecision {
  /** Native root of the deciding entry (the path's own root for `root`), null when nothing matched. */
  root: string | null;
}

const RANK: Record<Access, number> = { read: 1, write: 2, deny: 3 };

function normalizeOrThrow(os: HostOs, path: string): string {
  const normalized = normalizeNativePath(os, path);
  if (normalized === null)
    throw new FsError('invalid_params', `'${path}' is not an absolute path on '${os}'`);
  return normalized;
}

/** `/`, `C:\` or `\\server\share`: where `root` (depth 0) meets this path. */
function rootOf(os: HostOs, path: string): string {
  const split = splitNativePath(os, path);
  return split ? formatNativePath(os, { root: split.root, segments: [] }) : path;
}

interface Candidate {
  depth: number;
  decision: Decision;
}

function beats(candidate: Candidate, best: Candidate | null): boolean {
  if (best === null || candidate.depth > best.depth) return true;
  return candidate.depth === best.depth && RANK[candidate.decision.access] > RANK[best.decision.access];
}

/** An entry with what it covers in native terms, worked out once for many decisions. */
interface ScopedEntry {
  entry: FileSystemEntry;
  scope: EntryScope;
  /** The scope's roots (kind `paths`), split; the ones that are not absolute are left out. */
  roots: SplitNativePath[];
  label: string;
  carved: 'minimal' | 'root' | null;
}

function scopedEntries(profile: PermissionProfile, os: HostOs): ScopedEntry[] | null {
  if (!isRestrictedProfile(profile)) return null;
  return profile.file_system.entries.map((entry) => {
    const scope = entryScope(entry, os);
    const roots = scope.kind === 'paths' ? scope.paths.map((root) => splitNativePath(os, root)) : [];
    return {
      entry,
      scope,
      roots: roots.filter((root): root is SplitNativePath => root !== null),
      label: entryLabel(entry),
      carved: secretsCarvedFrom(entry),
    };
  });
}

function decide(profile: PermissionProfile, nativePath: string, os: HostOs): Decision {
  return decideAmong(scopedEntries(profile, os), nativePath, os);
}

/** `entries` null: an unrestricted profile, which writes everywhere. */
function decideAmong(entries: readonly ScopedEntry[] | null, nativePath: string, os: HostOs): Decision {
  if (entries === null) return { access: 'write', entry: null, root: null };
  const path = normalizeOrThrow(os, nativePath);
  const pathSplit = splitNativePath(os, path) as SplitNativePath;
  let best: Candidate | null = null;
  for (const { entry, scope, roots, label, carved } of entries) {
    const candidates: Candidate[] = [];
    if (scope.kind === 'glob') {
      if (globDeniesPath(scope.pattern, path, os)) return { access: 'deny', entry: label, root: null };
    } else if (scope.kind === 'everything') {
      candidates.push({ depth: 0, decision: { access: entry.access, entry: label, root: rootOf(os, path) } });
    } else {
      for (const root of roots) {
        if (!splitStartsWith(os, pathSplit, root)) continue;
        const decision = { access: entry.access, entry: label, root: formatNativePath(os, root) };
        candidates.push({ depth: root.segments.length, decision });
      }
    }
    if (carved !== null) candidates.push(...rootOnlySecretExclusions(os, path, carved));
    for (const candidate of candidates) if (beats(candidate, best)) best = candidate;
  }
  return best ? best.decision : { access: 'deny', entry: null, root: null };
}

/**
 * The grants that never include the root-only secrets (platform-roots.ts rootOnlySecrets): the
 * minimal set, and a whole-disk read (the read-only profile), under which a root broker's sandbox
 * would otherwise read the host's password hashes and private keys. A whole-disk *write* is left
 * as written: without anything narrowing it, it runs with no sandbox at all, and its owner chose so.
 */
export function secretsCarvedFrom(entry: FileSystemEntry): 'minimal' | 'root' | null {
  if (entry.path.type !== 'special') return null;
  const { kind } = entry.path.value;
  if (kind === 'minimal') return 'minimal';
  return kind === 'root' && entry.access === 'read' ? 'root' : null;
}

/** How a denial carved out of such a grant is labelled. */
export function rootOnlySecretLabel(grant: 'minimal' | 'root'): string {
  return `${grant}:deny (a root-only secret)`;
}

/**
 * The root-only secrets the grant does not include, as denials at their own depth: deeper than
 * the grant's root, so they win over it and over any grant at or above them, as the masks the
 * widening adds win in the sandbox.
 */
function rootOnlySecretExclusions(os: HostOs, path: string, grant: 'minimal' | 'root'): Candidate[] {
  const candidates: Candidate[] = [];
  for (const secret of rootOnlySecrets(os)) {
    const at = splitNativePath(os, secret.path);
    if (at === null || !pathStartsWith(os, path, secret.path)) continue;
    candidates.push({
      depth: at.segments.length,
      decision: { access: 'deny', entry: rootOnlySecretLabel(grant), root: null },
    });
  }
  return candidates;
}

/** The access a profile gives a native absolute path, with the entry that decided it. */
export function accessFor(profile: PermissionProfile, nativePath: string, os: HostOs): AccessDecision {
  const { access, entry } = decide(profile, nativePath, os);
  return { access, entry };
}

/**
 * accessFor for many paths of one profile: each entry's scope (its URI parsed into a native path)
 * is worked out once instead of once per path. The sandbox plan asks about every entry's root and
 * its parent against every entry, thousands of URI parses for a plain context otherwise.
 */
export function accessResolver(
  profile: PermissionProfile,
  os: HostOs,
): (nativePath: string) => AccessDecision {
  const entries = scopedEntries(profile, os);
  return (nativePath) => {
    const { access, entry } = decideAmong(entries, nativePath, os);
    return { access, entry };
  };
}

export type AccessCheck =
  | { allowed: true }
  | {
      allowed: false;
      kind: 'permission_denied' | 'protected_path';
      rule: string;
      /** The path itself is a surface name (path-guard.ts GuardDecision): a link there may be removed. */
      surfaceLeaf?: true;
    };

/**
 * Whether `want` is allowed on the path, and if not the rule that refused it. This is the early,
 * clear-error check; the platform sandbox and the helper's guard are what enforce. `surface` is the
 * executable surface the context protects (the fixed entries unless the policy added some).
 */
export function checkAccess(
  profile: PermissionProfile,
  nativePath: string,
  want: 'read' | 'write',
  os: HostOs,
  surface: readonly SurfaceEntry[] = EXECUTABLE_SURFACE,
): AccessCheck {
  const decision = decide(profile, nativePath, os);
  if (decision.access === 'deny') {
    const rule = decision.entry
      ? `denied by entry ${decision.entry}`
      : want === 'read'
        ? 'outside readable roots'
        : 'outside writable roots';
    return { allowed: false, kind: 'permission_denied', rule };
  }
  if (want === 'read') return { allowed: true };
  if (decision.access === 'read')
    return { allowed: false, kind: 'permission_denied', rule: 'outside writable roots' };
  return surfaceRefusal(decision.root, nativePath, os, surface) ?? { allowed: true };
}

/**
 * The surface entry a write would land in, at any depth below the deciding writable root. A
 * writable root that itself lies inside one is an explicit grant, so nothing is protected below it.
 * Unrestricted profiles have no writable roots and hence nothing protected (as in the reference).
 */
function surfaceRefusal(
  root: string | null,
  nativePath: string,
  os: HostOs,
  surface: readonly SurfaceEntry[],
): AccessCheck | null {
  if (root === null) return null;
  const rootSplit = splitNativePath(os, root);
  if (!rootSplit || isInsideSurface(surface, rootSplit.segments, os)) return null;
  const below = relativeSegments(os, nativePath, root) ?? [];
  const match = surfaceMatch(surface, below, os);
  if (match === null) return null;
  return {
    allowed: false,
    kind: 'protected_path',
    rule: surfaceRule(match.entry),
    ...(match.end === below.length - 1 ? { surfaceLeaf: true as const } : {}),
  };
}
