import { FsError, type HostOs, isFsError, parseDenyGlob, type ResultOf } from '@fs-sandbox/policy';

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/** `1.50 KB`: bytes below 1 KiB as they are, larger sizes in binary units with two decimals. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const unit = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), SIZE_UNITS.length - 1);
  return `${(bytes / 1024 ** unit).toFixed(2)} ${SIZE_UNITS[unit]}`;
}

const kindTag = (isDirectory: boolean) => (isDirectory ? '[DIR]' : '[FILE]');

export function directoryLines(entries: ResultOf<'fs/readDirectory'>['entries']): string {
  return entries.map((entry) => `${kindTag(entry.isDirectory)} ${entry.fileName}`).join('\n');
}

export interface SizedEntry {
  name: string;
  isDirectory: boolean;
  /** 0 when the entry could not be examined. */
  size: number;
}

export function sizedDirectoryLines(entries: readonly SizedEntry[], sortBy: 'name' | 'size'): string {
  const sorted = [...entries].sort((a, b) =>
    sortBy === 'size' ? b.size - a.size : a.name.localeCompare(b.name),
  );
  const files = entries.filter((entry) => !entry.isDirectory);
  const total = files.reduce((sum, entry) => sum + entry.size, 0);
  return [
    ...sorted.map(
      (entry) =>
        `${kindTag(entry.isDirectory)} ${entry.name.padEnd(30)} ${entry.isDirectory ? '' : formatSize(entry.size).padStart(10)}`,
    ),
    '',
    `Total: ${files.length} files, ${entries.length - files.length} directories`,
    `Combined size: ${formatSize(total)}`,
  ].join('\n');
}

export function fileInfoLines(metadata: ResultOf<'fs/getMetadata'>): string {
  const lines: [string, unknown][] = [
    ['size', metadata.size],
    ['created', new Date(metadata.createdAtMs)],
    ['modified', new Date(metadata.modifiedAtMs)],
    ['accessed', new Date(metadata.accessedAtMs)],
    ['isDirectory', metadata.isDirectory],
    ['isFile', metadata.isFile],
    // The reference prints the last three octal digits of the mode.
    ['permissions', metadata.permissions.slice(-3)],
    // Since the reference's 2.3.0: other names of the file, possibly outside, that a write changes.
    ['hardLinks', metadata.hardLinks],
  ];
  return lines.map(([key, value]) => `${key}: ${String(value)}`).join('\n');
}

/** One entry of a walk, by its path segments below the walked directory. */
export interface TreeWalkEntry {
  segments: readonly string[];
  isDirectory: boolean;
}

/** Depth-first order with each directory's entries by name, as the reference visits them. */
export function depthFirst(entries: readonly TreeWalkEntry[]): TreeWalkEntry[] {
  return [...entries].sort((a, b) => {
    const shared = Math.min(a.segments.length, b.segments.length);
    for (let i = 0; i < shared; i++) {
      const x = a.segments[i] as string;
      const y = b.segments[i] as string;
      if (x !== y) return x < y ? -1 : 1;
    }
    return a.segments.length - b.segments.length;
  });
}

/**
 * The entries a walk keeps when an entry matching `excluded` is dropped with everything below it
 * (the reference never descends into an excluded directory), in depth-first order.
 */
export function withoutExcluded(
  entries: readonly TreeWalkEntry[],
  excluded: (relativePath: string) => boolean,
): TreeWalkEntry[] {
  const dropped = new Set<string>();
  return depthFirst(entries).filter((entry) => {
    const key = entry.segments.join('/');
    const parent = entry.segments.slice(0, -1).join('/');
    if ((parent !== '' && dropped.has(parent)) || excluded(key)) {
      dropped.add(key);
      return false;
    }
    return true;
  });
}

/**
 * A model's glob over paths relative to the searched directory, matched as the policy's deny globs
 * are: without a regex, in time bounded by pattern and path (a step budget past that is
 * `invalid_params`). picomatch's and minimatch's backtracking regexes took minutes on
 * `**` + `/*a*a*a*a*a*a*a*a*a*a*a*a*b` against long names and held every other call of the server.
 * Dot files match, as with the reference's `{ dot: true }`. A pattern the matcher refuses (a `.` or
 * empty segment, extglob syntax) is `invalid_params` naming it.
 */
function relativeGlob(pattern: string, os: HostOs): (relativePath: string) => boolean {
  try {
    return parseDenyGlob(pattern, os).test;
  } catch (error) {
    if (!isFsError(error)) throw error;
    const reason = error.message.replace(/^deny glob `[\s\S]*?` cannot be enforced: /, '');
    throw new FsError('invalid_params', `the glob \`${pattern}\` cannot be matched: ${reason}`);
  }
}

/**
 * directory_tree's exclusion: a pattern with `*` as a glob, any other as a name at any depth (the
 * name, then the name below any directories with its contents: a trailing globstar also matches
 * the directory it follows, as in a deny glob).
 */
export function treeExcluder(patterns: readonly string[], os: HostOs): (relativePath: string) => boolean {
  return globMatcher(
    patterns.flatMap((pattern) => (pattern.includes('*') ? [pattern] : [pattern, `**/${pattern}/**`])),
    os,
  );
}

/** search_files' patterns: globs over the path relative to the searched directory. */
export function globMatcher(patterns: readonly string[], os: HostOs): (relativePath: string) => boolean {
  const matchers = patterns.map((pattern) => relativeGlob(pattern, os));
  return (relativePath) => matchers.some((matches) => matches(relativePath));
}

interface TreeNode {
  name: string;
  type: 'file' | 'directory';
  children?: TreeNode[];
}

/**
 * The reference's tree JSON (2-space indentation; directories have `children`, except those at the
 * last level `depth` allows, which were not read).
 */
export function treeJson(entries: readonly TreeWalkEntry[], depth?: number): string {
  const top: TreeNode[] = [];
  const childrenOf = new Map<string, TreeNode[]>([['', top]]);
  for (const entry of depthFirst(entries)) {
    const siblings = childrenOf.get(entry.segments.slice(0, -1).join('/'));
    if (siblings === undefined) continue;
    const node: TreeNode = {
      name: entry.segments[entry.segments.length - 1] as string,
      type: entry.isDirectory ? 'directory' : 'file',
    };
    if (entry.isDirectory && entry.segments.length < (depth ?? Number.POSITIVE_INFINITY)) {
      node.children = [];
      childrenOf.set(entry.segments.join('/'), node.children);
    }
    siblings.push(node);
  }
  return JSON.stringify(top, null, 2);
}
