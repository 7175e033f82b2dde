import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { decodePathBytes, fsPathArg, joinPath, parentPath, splitNativePath } from '@fs-sandbox/policy/core';

/**
 * The only filesystem reads of the Linux backend. The argv builder is pure; everything it needs to
 * know about the host tree (does a path exist, is it a file or a directory, which symlinks does
 * resolving it cross) is collected here first, so the decisions stay testable with made-up facts.
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
}

export interface PathFacts {
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
): Promise<PathFacts> {
  const unique = [...new Set(paths)];
  const facts = await Promise.all(unique.map(async (path) => [path, await factFor(path)] as const));
  const realRoots = await Promise.all(writableRoots.map((root) => realpathOrNull(root)));
  return {
    paths: new Map(facts),
    writableRootRealPaths: realRoots.filter((root): root is string => root !== null),
  };
}

async function factFor(path: string): Promise<PathFact> {
  const linkText = await readLinkOrNull(path);
  const resolved = await resolveRecordingSymlinks(path);
  if (resolved.real === null) return { kind: 'missing', linkText, symlinksCrossed: resolved.symlinks };
  return { kind: await kindOf(resolved.real), linkText, symlinksCrossed: resolved.symlinks };
}

/**
 * Resolves `path` one component at a time, like the kernel does, remembering each symlink it
 * follows. `real` is null when some component is missing or cannot be resolved (a loop, no access):
 * bwrap could not bind such a source either, and the builder never creates a placeholder for it.
 */
async function resolveRecordingSymlinks(path: string): Promise<{ real: string | null; symlinks: string[] }> {
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
    let isLink: boolean;
    try {
      isLink = (await lstat(fsPathArg(candidate))).isSymbolicLink();
    } catch {
      return { real: null, symlinks };
    }
    if (!isLink) {
      current = candidate;
      continue;
    }
    symlinks.push(candidate);
    const target = await readLinkOrNull(candidate);
    if (target === null || symlinks.length > MAX_SYMLINK_HOPS) return { real: null, symlinks };
    if (target.startsWith('/')) current = '/';
    pending.unshift(...target.split('/').filter((part) => part !== '' && part !== '.'));
  }
  return { real: current, symlinks };
}

async function kindOf(real: string): Promise<PathKind> {
  try {
    const info = await stat(fsPathArg(real));
    if (info.isDirectory()) return 'directory';
    return info.isFile() ? 'file' : 'other';
  } catch {
    return 'missing';
  }
}

async function readLinkOrNull(path: string): Promise<string | null> {
  try {
    return decodePathBytes(await readlink(fsPathArg(path), 'buffer'));
  } catch {
    return null;
  }
}

async function realpathOrNull(path: string): Promise<string | null> {
  try {
    return decodePathBytes(await realpath(fsPathArg(path), 'buffer'));
  } catch {
    return null;
  }
}
