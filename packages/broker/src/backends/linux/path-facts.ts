import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { globDeniesPath } from '@fs-sandbox/policy';
import {
  decodePathBytes,
  FsError,
  fsPathArg,
  joinPath,
  LIMITS,
  parentPath,
  splitNativePath,
} from '@fs-sandbox/policy/core';

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
}

/** Linux's own limit on symlinks followed while resolving one path (ELOOP past it). */
const MAX_SYMLINK_HOPS = 40;

export async function collectPathFacts(
  paths: readonly string[],
  writableRoots: readonly string[],
  denyGlobMatches: readonly string[] = [],
): Promise<PathFacts> {
  const unique = [...new Set(paths)];
  const links: LstatCache = new Map();
  const facts = unique.map((path) => [path, factFor(path, links)] as const);
  const realRoots = writableRoots.map((root) => resolveRecordingSymlinks(root, links).real);
  return {
    denyGlobMatches,
    paths: new Map(facts),
    writableRootRealPaths: realRoots.filter((root): root is string => root !== null),
  };
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
      known = lstatSync(fsPathArg(path));
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
    return decodePathBytes(readlinkSync(fsPathArg(path), 'buffer'));
  } catch {
    return null;
  }
}

const GLOB_CHARACTERS = /[*?[]/;

/**
 * The existing paths a set of absolute deny globs matches, found by walking down from each
 * pattern's literal prefix without following symlinks. A matching directory is taken whole (the
 * policy denies everything below it) and not entered. The walk is bounded; a glob that would need
 * more is refused, since masking only part of its matches would leave the rest readable.
 * Matches created after the scan cannot be masked; the broker's pre-check refuses requests that
 * name them.
 */
export function expandDenyGlobs(patterns: readonly string[]): string[] {
  const matches = new Set<string>();
  let visited = 0;
  for (const pattern of patterns) {
    const segments = splitNativePath('linux', pattern)?.segments ?? [];
    const literal = segments.findIndex((segment) => GLOB_CHARACTERS.test(segment));
    const prefixLength = literal === -1 ? segments.length : literal;
    const maxDepth = pattern.includes('**') ? LIMITS.denyGlobScanMaxDepth : segments.length - prefixLength;
    const queue = [{ path: `/${segments.slice(0, prefixLength).join('/')}`, depth: 0 }];
    while (queue.length > 0) {
      const { path, depth } = queue.shift() as { path: string; depth: number };
      visited += 1;
      if (visited > LIMITS.denyGlobScanMaxEntries) {
        throw new FsError(
          'sandbox_unavailable',
          `the deny glob ${pattern} needs more than ${LIMITS.denyGlobScanMaxEntries} entries scanned to be enforced; narrow it`,
        );
      }
      if (globDeniesPath(pattern, path, 'linux')) {
        if (existsNoFollow(path)) matches.add(path);
        continue;
      }
      if (depth >= maxDepth) continue;
      for (const name of directoryNames(path))
        queue.push({ path: joinPath('linux', path, name), depth: depth + 1 });
    }
  }
  return [...matches].sort();
}

/** Entry names of a real directory (not a symlink to one); none for anything else. */
function directoryNames(path: string): string[] {
  try {
    if (!lstatSync(fsPathArg(path)).isDirectory()) return [];
    return readdirSync(fsPathArg(path), { encoding: 'buffer' }).map((name) => decodePathBytes(name));
  } catch {
    return [];
  }
}

function existsNoFollow(path: string): boolean {
  try {
    lstatSync(fsPathArg(path));
    return true;
  } catch {
    return false;
  }
}
