import type { Dirent, Stats } from 'node:fs';
import {
  type DenyGlob,
  type GlobAlternative,
  globLiteralPrefix,
  parseDenyGlob,
  type SandboxPlan,
} from '@fs-sandbox/policy';
import {
  decodePathBytes,
  FsError,
  joinPath,
  LIMITS,
  parentPath,
  pathStartsWith,
  splitNativePath,
} from '@fs-sandbox/policy/core';
import * as host from '../../runner/host-reads.js';
import { CPU_DEVICES_DIR, CPU_THERMAL_THROTTLE } from './kernel-paths.js';

/**
 * The only filesystem reads of the Linux backend. The argv builder is pure; everything it needs to
 * know about the host tree (does a path exist, is it a file or a directory, which symlinks does
 * resolving it cross) is collected here first, so the decisions stay testable with made-up facts.
 *
 * The calls are synchronous on purpose: this runs for every sandboxed request, and a few dozen
 * metadata lookups of cached dentries cost ~0.05 ms in a row against ~1.5 ms as thread-pool promises
 * (measured by bench/run.mjs), which a cold helper start would otherwise pay each time.
 */

export type PathKind = 'missing' | 'directory' | 'file' | 'other';

export interface PathFact {
  /** What the path resolves to (symlinks followed), i.e. what a bind mount of it would mount. */
  kind: PathKind;
  /** The link text when the path itself (its last component) is a symlink, else null. */
  linkText: string | null;
  /**
   * Every symlink met while resolving the path, each named by its location with the directory
   * holding it already resolved. The builder refuses a mask that depends on a symlink the sandbox
   * could rewrite.
   */
  symlinksCrossed: string[];
  /**
   * The fully resolved path when it differs from the path itself (a symlink was crossed): the
   * sandbox may show that same file under another spelling, which a mask must cover too.
   */
  real?: string;
}

export interface PathFacts {
  /** Existing paths that a deny glob of the plan matches (each masked like a denied path). */
  denyGlobMatches: readonly string[];
  /** Facts for every path the builder asked about. */
  paths: ReadonlyMap<string, PathFact>;
  /** Real path of each writable root that exists (a symlink inside one of these can be rewritten from inside). */
  writableRootRealPaths: readonly string[];
  /** The per-CPU kernel paths to mask where they exist (kernel-paths.ts); absent: none. */
  cpuKernelPaths?: readonly string[];
}

/** Linux's own limit on symlinks followed while resolving one path (ELOOP past it). */
const MAX_SYMLINK_HOPS = 40;

export async function collectPathFacts(
  paths: readonly string[],
  writableRoots: readonly string[],
  denyGlobMatches: readonly string[] = [],
  cpuKernelPaths: readonly string[] = [],
): Promise<PathFacts> {
  const unique = [...new Set(paths)];
  const links: LstatCache = new Map();
  const facts = unique.map((path) => [path, factFor(path, links)] as const);
  const realRoots = writableRoots.map((root) => resolveRecordingSymlinks(root, links).real);
  return {
    denyGlobMatches,
    paths: new Map(facts),
    writableRootRealPaths: realRoots.filter((root): root is string => root !== null),
    cpuKernelPaths,
  };
}

/** CPUs listed past this are not looked at (no machine has that many; the listing stays bounded). */
const MAX_CPUS = 8192;

/**
 * `/sys/devices/system/cpu/cpuN/thermal_throttle` for each CPU directory (kernel-paths.ts): which
 * exist depends on the machine, so the directory is listed. Nothing listed when it cannot be read.
 */
export function cpuThermalThrottlePaths(): string[] {
  let entries: ReturnType<typeof host.readdirTyped>;
  try {
    entries = host.readdirTyped(CPU_DEVICES_DIR);
  } catch {
    return [];
  }
  return entries
    .map((entry) => entry.name.toString('latin1'))
    .filter((name) => /^cpu\d{1,5}$/.test(name))
    .slice(0, MAX_CPUS)
    .sort()
    .map((name) => `${CPU_DEVICES_DIR}/${name}/${CPU_THERMAL_THROTTLE}`);
}

/**
 * lstat answers of one collectPathFacts call (null: cannot be looked at): the paths of one plan
 * share most of their ancestors, and this runs for every sandboxed request.
 */
type LstatCache = Map<string, Stats | null>;

function lstatOf(path: string, links: LstatCache): Stats | null {
  let known = links.get(path);
  if (known === undefined) {
    try {
      known = host.lstat(path);
    } catch {
      known = null;
    }
    links.set(path, known);
  }
  return known;
}

function factFor(path: string, links: LstatCache): PathFact {
  const linkText = lstatOf(path, links)?.isSymbolicLink() ? readLinkOrNull(path) : null;
  const resolved = resolveRecordingSymlinks(path, links);
  if (resolved.real === null) return { kind: 'missing', linkText, symlinksCrossed: resolved.symlinks };
  const fact: PathFact = { kind: kindOf(resolved.real, links), linkText, symlinksCrossed: resolved.symlinks };
  if (resolved.real !== path) fact.real = resolved.real;
  return fact;
}

/**
 * Resolves `path` one component at a time, like the kernel does, remembering each symlink it
 * follows. `real` is null when some component is missing or cannot be resolved (a loop, no access):
 * bwrap could not bind such a source either, and the builder never creates a placeholder for it.
 */
function resolveRecordingSymlinks(
  path: string,
  links: LstatCache,
): { real: string | null; symlinks: string[] } {
  const symlinks: string[] = [];
  const pending = splitNativePath('linux', path)?.segments ?? [];
  let current = '/';
  while (pending.length > 0) {
    const name = pending.shift() as string;
    // `..` from a link target climbs from wherever resolution has got to, as in the kernel.
    if (name === '..') {
      current = parentPath('linux', current) ?? '/';
      continue;
    }
    const candidate = joinPath('linux', current, name);
    const info = lstatOf(candidate, links);
    if (info === null) return { real: null, symlinks };
    if (!info.isSymbolicLink()) {
      current = candidate;
      continue;
    }
    symlinks.push(candidate);
    const target = readLinkOrNull(candidate);
    if (target === null || symlinks.length > MAX_SYMLINK_HOPS) return { real: null, symlinks };
    if (target.startsWith('/')) current = '/';
    pending.unshift(...target.split('/').filter((part) => part !== '' && part !== '.'));
  }
  return { real: current, symlinks };
}

/** What a fully resolved path is: its own lstat (no symlink left in it) says what stat would. */
function kindOf(real: string, links: LstatCache): PathKind {
  const info = lstatOf(real, links);
  if (info === null) return 'missing';
  if (info.isDirectory()) return 'directory';
  return info.isFile() ? 'file' : 'other';
}

function readLinkOrNull(path: string): string | null {
  try {
    return decodePathBytes(host.readlink(path));
  } catch {
    return null;
  }
}

/**
 * The existing paths a set of absolute deny globs matches. Bind mounts are what hide them, so every
 * match must be found now, when the sandbox is built: each brace alternative is walked down from
 * its literal prefix (followed if it is a symlink, as the sandbox would follow it), without
 * following the symlinks met below it. A matching directory is taken whole (the policy denies
 * everything below it) and not entered. Matches created after the scan cannot be masked; the
 * broker's pre-check refuses requests that name them.
 *
 * A scan that cannot see every match refuses the sandbox (`sandbox_unavailable`) instead of
 * masking some of them, which would leave the rest readable: too many entries, or directories left
 * at the depth bound of a `**` pattern.
 *
 * A symlinked directory below the prefix is not entered (masks go on real locations); what lies
 * beneath it is judged where it really is, by the policy there:
 * - a target the sandbox cannot read (`readable` false: outside every root) shows nothing, so
 *   nothing denied becomes readable through the link;
 * - a target outside the glob's own physical scope (the real path of its literal prefix) holds no
 *   file the glob denies where it is: the policy there decides (a data directory, a tool cache);
 * - a target inside that scope is scanned where it really is, and each match masked there, which
 *   the link resolves to; that is exact only when the rest of the pattern is `**` or `**` and a
 *   single name (pnpm's symlinked node_modules under `**` + `/*.env`): each file keeps its name at
 *   its real location. A longer rest such as `** /secret/*.pem` may match through the link's own
 *   name (`<prefix>/secret -> data`), which the real location does not repeat: a file the glob
 *   denies by that name would be readable, so the request is refused (`permission_denied`, naming
 *   the link and its target).
 */
export function expandDenyGlobs(
  patterns: readonly string[],
  readable: (realPath: string) => boolean,
): string[] {
  const matches = new Set<string>();
  const scan = { visited: 0 };
  for (const pattern of patterns) {
    const glob = parseDenyGlob(pattern, 'linux');
    for (const alternative of glob.alternatives) scanAlternative(glob, alternative, scan, matches, readable);
  }
  return [...matches].sort();
}

/**
 * Whether the sandbox of `plan` may show anything at or below the real path `target`: the whole
 * disk, or a readable or writable root (as spelled or as its real path) holding it or inside it.
 * Erring towards true only makes the scan stricter.
 */
export function planMayShow(plan: SandboxPlan): (target: string) => boolean {
  if (plan.fullDiskRead) return () => true;
  const roots = [...plan.readableRoots, ...plan.writableRoots.map((root) => root.root)];
  const spellings = [...roots, ...roots.map((root) => realPathOrNull(root)).filter((real) => real !== null)];
  return (target) =>
    spellings.some((root) => pathStartsWith('linux', target, root) || pathStartsWith('linux', root, target));
}

function scanAlternative(
  glob: DenyGlob,
  alternative: GlobAlternative,
  scan: { visited: number },
  matches: Set<string>,
  readable: (realPath: string) => boolean,
): void {
  const { prefix, rest } = globLiteralPrefix(alternative);
  const unbounded = rest.some((segment) => segment.kind === 'globstar');
  const depthBound = unbounded ? LIMITS.denyGlobScanMaxDepth : rest.length;
  const linksMaySkip = rest[0]?.kind === 'globstar' && rest.length <= 2 && rest[1]?.kind !== 'globstar';
  const refuse = (reason: string): never => {
    throw new FsError(
      'sandbox_unavailable',
      `the deny glob ${glob.pattern} cannot be enforced: ${reason}; narrow the glob`,
    );
  };
  const realPrefix = realPathOrNull(prefix);
  const queue = [{ path: prefix, depth: 0 }];
  while (queue.length > 0) {
    const { path, depth } = queue.shift() as { path: string; depth: number };
    scan.visited += 1;
    if (scan.visited > LIMITS.denyGlobScanMaxEntries)
      refuse(`its scan needs more than ${LIMITS.denyGlobScanMaxEntries} entries to find every match`);
    if (glob.test(path)) {
      if (existsNoFollow(path)) matches.add(path);
      continue;
    }
    if (depth >= depthBound && !unbounded) continue;
    const entries = directoryEntries(path, depth === 0);
    if (entries.length === 0) continue;
    if (depth >= depthBound)
      refuse(`${path} is ${depthBound} levels below ${prefix} and still has entries that could match`);
    for (const entry of entries) {
      const child = joinPath('linux', path, decodePathBytes(entry.name));
      if (!entry.isSymbolicLink() || glob.test(child) || (!unbounded && depth + 1 >= depthBound)) {
        queue.push({ path: child, depth: depth + 1 });
        continue;
      }
      const target = realPathOrNull(child);
      if (target === null || !isDirectory(target) || !readable(target)) continue;
      if (realPrefix === null || !pathStartsWith('linux', target, realPrefix) || linksMaySkip) continue;
      throw new FsError(
        'permission_denied',
        `the deny glob ${glob.pattern} cannot be enforced beside the symlinked directory ${child} (-> ${target}): ` +
          'files it names through the link are masked only where the glob matches their real names; ' +
          'deny the target too, narrow the glob, or move the link',
        { denyGlob: glob.pattern, link: child, target },
      );
    }
  }
}

/** Entries of a directory; the scan's prefix is followed if it is a symlink, nothing below it is. */
function directoryEntries(path: string, followLink: boolean): Dirent<Buffer>[] {
  try {
    const info = followLink ? host.stat(path) : host.lstat(path);
    if (!info.isDirectory()) return [];
    return host.readdirTyped(path);
  } catch {
    return [];
  }
}

function realPathOrNull(path: string): string | null {
  try {
    return decodePathBytes(host.realpath(path));
  } catch {
    return null;
  }
}

function isDirectory(path: string): boolean {
  try {
    return host.stat(path).isDirectory();
  } catch {
    return false;
  }
}

function existsNoFollow(path: string): boolean {
  try {
    host.lstat(path);
    return true;
  } catch {
    return false;
  }
}
