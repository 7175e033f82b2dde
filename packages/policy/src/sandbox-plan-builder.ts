import { FsError } from './error-kinds.js';
import type { HostOs } from './host-os.js';
import {
  formatNativePath,
  parentPath,
  pathStartsWith,
  type SplitNativePath,
  splitNativePath,
} from './native-path.js';
import { accessResolver } from './permissions/access.js';
import { entryScope } from './permissions/entry-scope.js';
import { EXECUTABLE_SURFACE, isInsideSurface } from './permissions/executable-surface.js';
import { hasFullDiskRead } from './permissions/full-disk.js';
import type { SandboxedContext } from './permissions/resolve-context.js';
import type { SandboxPlan, WritableRoot } from './sandbox-plan.js';
import { type Access, isRestrictedProfile, type RestrictedProfile } from './schemas/sandbox-context.js';

/**
 * Turns a resolved, widened profile into the platform-neutral SandboxPlan. Every entry root is
 * classified by the access it ends up with (deepest wins) and the access just above it:
 *   write                          -> writable root (nested ones kept: each protects its own `.git`)
 *   read inside a writable root    -> read-only subpath of the deepest such root
 *   read where nothing grants      -> readable root (when there is no full-disk read)
 *   deny inside something granted  -> denied path
 *   other read / deny entries      -> unshown (a symlink may still give them a name a backend must cover)
 * Anything else is redundant and left out, so the plan holds no mount that changes nothing.
 * Output is sorted segment-wise, which keeps it deterministic for the backends' golden tests.
 */
export function buildSandboxPlan(resolved: SandboxedContext, os: HostOs): SandboxPlan {
  const profile = resolved.profile;
  if (!isRestrictedProfile(profile)) {
    throw new FsError('internal_error', 'a sandboxed context must carry a managed restricted profile');
  }
  const fullDiskRead = hasFullDiskRead(profile);
  const { points, denyGlobs } = collect(profile, os, fullDiskRead);
  // Globs are enforced as their own layer (denyGlobs); leaving them out here keeps one glob match
  // from reclassifying a whole root.
  const accessAt = accessResolver(withoutGlobs(profile), os);
  const decisionAt = (path: string): Access => accessAt(path).access;
  const grantedAbove = (path: string): Access | null => {
    const parent = parentPath(os, path);
    if (parent === null) return null;
    const above = accessAt(parent);
    return above.entry === null ? null : above.access;
  };

  const writable = points.filter((p) => decisionAt(p) === 'write');
  const readableRoots: string[] = [];
  const readOnly = new Map<string, string[]>(writable.map((w) => [w, []]));
  const deniedPaths: string[] = [];
  const unshownDeniedPaths: string[] = [];
  const unshownReadOnlyPaths: string[] = [];
  for (const point of points) {
    const here = decisionAt(point);
    const above = grantedAbove(point);
    if (here === 'read') {
      const owner = deepestStrictAncestor(os, point, writable);
      if (owner !== null && above !== 'read') readOnly.get(owner)?.push(point);
      else if (owner === null && above !== 'read' && above !== 'write' && !fullDiskRead)
        readableRoots.push(point);
      // `/` has no second name, and without a writable root no other spelling can be written.
      else if (owner === null && writable.length > 0 && parentPath(os, point) !== null)
        unshownReadOnlyPaths.push(point);
    } else if (here === 'deny' && (above === 'read' || above === 'write')) {
      deniedPaths.push(point);
    } else if (here === 'deny' && above === null) {
      unshownDeniedPaths.push(point);
    }
  }

  const writableRoots: WritableRoot[] = sortPaths(os, writable).map((root) => ({
    root,
    readOnlySubpaths: sortPaths(os, readOnly.get(root) ?? []),
    protectedNames: isInsideSurface(resolved.surface, split(os, root).segments, os)
      ? []
      : resolved.surface.map((entry) => entry.path),
  }));
  return {
    os,
    fullDiskRead,
    readableRoots: sortPaths(os, readableRoots),
    writableRoots,
    deniedPaths: sortPaths(os, deniedPaths),
    ...(unshownDeniedPaths.length > 0 ? { unshownDeniedPaths: sortPaths(os, unshownDeniedPaths) } : {}),
    ...(unshownReadOnlyPaths.length > 0 ? { unshownReadOnlyPaths: sortPaths(os, unshownReadOnlyPaths) } : {}),
    denyGlobs: [...new Set(denyGlobs)].sort(),
    cwd: resolved.cwd,
    // Only where the policy says more than the fixed surface (plans stay as they were otherwise).
    ...(resolved.surface.length > EXECUTABLE_SURFACE.length ? { surface: resolved.surface } : {}),
    ...(resolved.nestedRepositories.length > 0
      ? { nestedRepositories: sortPaths(os, resolved.nestedRepositories) }
      : {}),
  };
}

function collect(
  profile: RestrictedProfile,
  os: HostOs,
  fullDiskRead: boolean,
): { points: string[]; denyGlobs: string[] } {
  const points: string[] = [];
  const denyGlobs: string[] = [];
  for (const entry of profile.file_system.entries) {
    const path = entry.path;
    if (path.type === 'special' && path.value.kind === 'minimal') {
      throw new FsError(
        'internal_error',
        'the sandbox plan needs a widened profile: `minimal` must be expanded to the roots that exist',
      );
    }
    const scope = entryScope(entry, os);
    if (scope.kind === 'glob') denyGlobs.push(scope.pattern);
    else if (scope.kind === 'paths')
      points.push(...scope.paths.map((p) => formatNativePath(os, split(os, p))));
    else if (scope.kind === 'everything') {
      // Windows has no single root to mount; only the plain full-disk-read case is expressible.
      if (os === 'windows' && !(fullDiskRead && entry.access === 'read')) {
        throw new FsError(
          'sandbox_unavailable',
          `a \`root:${entry.access}\` entry narrowed by other entries cannot be expressed on windows`,
        );
      }
      if (os !== 'windows') points.push('/');
    }
  }
  return { points: uniquePaths(os, points), denyGlobs };
}

function withoutGlobs(profile: RestrictedProfile): RestrictedProfile {
  const entries = profile.file_system.entries.filter((e) => e.path.type !== 'glob_pattern');
  return { ...profile, file_system: { ...profile.file_system, entries } };
}

function split(os: HostOs, path: string): SplitNativePath {
  const parts = splitNativePath(os, path);
  if (parts === null)
    throw new FsError('internal_error', `sandbox plan path '${path}' is not absolute on '${os}'`);
  return parts;
}

function deepestStrictAncestor(os: HostOs, path: string, candidates: string[]): string | null {
  let best: string | null = null;
  let bestDepth = -1;
  for (const candidate of candidates) {
    const depth = split(os, candidate).segments.length;
    if (depth < split(os, path).segments.length && pathStartsWith(os, path, candidate) && depth > bestDepth) {
      best = candidate;
      bestDepth = depth;
    }
  }
  return best;
}

function sortKey(os: HostOs, path: string): string[] {
  const parts = split(os, path);
  const all = [parts.root, ...parts.segments];
  return os === 'windows' ? all.map((s) => s.toLowerCase()) : all;
}

/** Segment-wise order: a parent always precedes its children (`/w`, `/w/sub`, `/w-x`). */
function comparePaths(os: HostOs, a: string, b: string): number {
  const ka = sortKey(os, a);
  const kb = sortKey(os, b);
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    const x = ka[i] as string;
    const y = kb[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return ka.length - kb.length || (a < b ? -1 : a > b ? 1 : 0);
}

function uniquePaths(os: HostOs, paths: string[]): string[] {
  const seen = new Set<string>();
  return paths.filter((p) => {
    const key = sortKey(os, p).join('\0');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function sortPaths(os: HostOs, paths: string[]): string[] {
  return [...paths].sort((a, b) => comparePaths(os, a, b));
}
