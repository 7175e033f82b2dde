import {
  type HostOs,
  hasLoneSurrogate,
  type PathGuard,
  pathStartsWith,
  relativeSegments,
} from '@fs-sandbox/policy/core';

/**
 * The guard's denied paths, deny globs and protected metadata names below a search root, as
 * ripgrep globs anchored at that root (`/sub/secret`), so ripgrep does not even open them. This is
 * an economy, not the enforcement: the kernel masks make those paths unreadable whatever ripgrep
 * tries. What cannot be said as a ripgrep glob (a non-UTF-8 name, a glob whose literal part does not
 * lead to `**`) is left to the masks.
 */
export function policyExcludes(guard: PathGuard | null, root: string, os: HostOs): string[] {
  if (guard === null) return [];
  const excludes = new Set<string>();
  for (const entry of guard.entries) {
    if (entry.reason !== 'denied' && entry.reason !== 'protected') continue;
    const below = relativeSegments(os, entry.path, root);
    if (below === null || below.length === 0 || below.some(hasLoneSurrogate)) continue;
    excludes.add(`/${below.map(escapeGlobLiteral).join('/')}`);
  }
  // Windows deny globs are drive-rooted; they stay with the enforcement alone.
  for (const { pattern } of os === 'windows' ? [] : guard.denyGlobs) {
    const glob = rootRelativeGlob(pattern, root, os);
    if (glob !== null && !hasLoneSurrogate(glob)) excludes.add(glob);
  }
  return [...excludes].sort();
}

const GLOB_META = /[*?[\]{}\\!]/;

function escapeGlobLiteral(segment: string): string {
  return segment.replace(/[*?[\]{}\\!]/g, (char) => `\\${char}`);
}

/**
 * An absolute deny glob as a glob relative to `root`: the part after the root when the glob's
 * literal start lies inside it, `**` and the rest when the glob's literal start is above the root
 * and followed by `**` (which then matches the root's part of every path too).
 */
function rootRelativeGlob(pattern: string, root: string, os: HostOs): string | null {
  const meta = pattern.search(GLOB_META);
  const literal = meta === -1 ? pattern : pattern.slice(0, pattern.lastIndexOf('/', meta) + 1);
  const literalDir = literal.endsWith('/') && literal.length > 1 ? literal.slice(0, -1) : literal;
  const rootPrefix = root.endsWith('/') ? root : `${root}/`;
  if (pattern.startsWith(rootPrefix) && literalDir.length >= root.length) {
    return `/${pattern.slice(rootPrefix.length)}`;
  }
  const rest = pattern.slice(literal.length);
  if (rest.startsWith('**/') && pathStartsWith(os, root, literalDir || '/')) {
    return rest;
  }
  return null;
}
