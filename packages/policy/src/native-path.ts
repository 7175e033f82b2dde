import type { HostOs } from './host-os.js';

/**
 * Lexical operations on native absolute paths, with the OS passed in so Windows rules are tested on
 * any host. Nothing here touches the disk: symlinks are the sandbox's business, these functions
 * only decide which policy entry a spelled-out path falls under.
 */

/** A native absolute path taken apart: `root` is `/`, `C:` or `\\server\share`; segments hold no `.`/`..`/empty parts. */
export interface SplitNativePath {
  root: string;
  segments: string[];
}

const DRIVE_ROOT = /^([A-Za-z]):[\\/]/;
const UNC_ROOT = /^[\\/]{2}([^\\/]+)[\\/]+([^\\/]+)/;

export function separatorFor(os: HostOs): string {
  return os === 'windows' ? '\\' : '/';
}

export function isAbsoluteNative(os: HostOs, path: string): boolean {
  return splitNativePath(os, path) !== null;
}

/**
 * Splits and lexically normalises an absolute path; null when it is not absolute (callers then
 * refuse it). `..` never climbs above the root. Windows device and verbatim forms (`\\?\`, `\\.\`)
 * are not accepted: they bypass the normal path rules the policy reasons about.
 */
export function splitNativePath(os: HostOs, path: string): SplitNativePath | null {
  if (path.includes('\0')) return null;
  let root: string;
  let rest: string;
  if (os === 'windows') {
    const drive = DRIVE_ROOT.exec(path);
    const unc = drive ? null : UNC_ROOT.exec(path);
    if (drive) {
      root = `${(drive[1] as string).toUpperCase()}:`;
      rest = path.slice(drive[0].length);
    } else if (unc && unc[1] !== '?' && unc[1] !== '.') {
      root = `\\\\${unc[1]}\\${unc[2]}`;
      rest = path.slice(unc[0].length);
    } else {
      return null;
    }
  } else {
    if (!path.startsWith('/')) return null;
    root = '/';
    rest = path;
  }
  const segments: string[] = [];
  for (const part of rest.split(os === 'windows' ? /[\\/]/ : '/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') segments.pop();
    else segments.push(part);
  }
  return { root, segments };
}

export function formatNativePath(os: HostOs, split: SplitNativePath): string {
  if (os !== 'windows') return `/${split.segments.join('/')}`;
  if (split.root.endsWith(':')) return `${split.root}\\${split.segments.join('\\')}`;
  return split.segments.length === 0 ? split.root : `${split.root}\\${split.segments.join('\\')}`;
}

/** Lexically normalised form of an absolute path, or null when it is not absolute. */
export function normalizeNativePath(os: HostOs, path: string): string | null {
  const split = splitNativePath(os, path);
  return split ? formatNativePath(os, split) : null;
}

/**
 * Joins relative parts onto an absolute base and normalises the result. Separators inside parts
 * are honoured; a leading separator in a part does not restart at the root (parts are always
 * relative to `base`). Throws when `base` is not absolute.
 */
export function joinPath(os: HostOs, base: string, ...parts: string[]): string {
  const sep = separatorFor(os);
  const joined = [base, ...parts].join(sep);
  const normalized = normalizeNativePath(os, joined);
  if (normalized === null) throw new TypeError(`joinPath: base '${base}' is not an absolute ${os} path`);
  return normalized;
}

/**
 * The path of entry `name` (as readdir returned it: never empty, `.`, `..`, nor holding a
 * separator) inside `directory` (normalised). Plain concatenation instead of joinPath: tree walks
 * call this once per entry, and re-normalising a path thousands of levels deep every time would
 * make a deep walk quadratic.
 */
export function childPath(os: HostOs, directory: string, name: string): string {
  const separator = separatorFor(os);
  return directory.endsWith(separator) ? `${directory}${name}` : `${directory}${separator}${name}`;
}

/**
 * True when the normalised path `path` is `directory` or lies below it: a string comparison
 * (linear in the shorter path, unlike pathStartsWith's split), for checks made once per entry of a
 * tree. Windows names compare as pathStartsWith compares them.
 */
export function isAtOrBelow(os: HostOs, path: string, directory: string): boolean {
  if (os === 'windows') return pathStartsWith(os, path, directory);
  if (path === directory) return true;
  const separator = separatorFor(os);
  const prefix = directory.endsWith(separator) ? directory : `${directory}${separator}`;
  return path.startsWith(prefix);
}

/** The parent directory, or null for a root (`/`, `C:\`, `\\server\share`) or a non-absolute path. */
export function parentPath(os: HostOs, path: string): string | null {
  const split = splitNativePath(os, path);
  if (!split || split.segments.length === 0) return null;
  return formatNativePath(os, { root: split.root, segments: split.segments.slice(0, -1) });
}

/**
 * The form Windows itself compares names in: case-insensitive, and with trailing dots and spaces
 * ignored (Win32 strips them, so `.git.` opens `.git`). Comparing any other way would let
 * `C:\W\.GIT.` slip past a rule written for `C:\w\.git`.
 */
export function windowsComparableName(segment: string): string {
  return segment.replace(/[. ]+$/, '').toLowerCase();
}

function sameName(os: HostOs, a: string, b: string): boolean {
  return os === 'windows' ? windowsComparableName(a) === windowsComparableName(b) : a === b;
}

/**
 * True when `prefix` equals `path` or is an ancestor of it, comparing whole segments
 * (`/ab` does not start with `/a`). False when either is not absolute.
 */
export function pathStartsWith(os: HostOs, path: string, prefix: string): boolean {
  const p = splitNativePath(os, path);
  const q = splitNativePath(os, prefix);
  return p !== null && q !== null && splitStartsWith(os, p, q);
}

/** pathStartsWith for paths already split (a caller comparing many paths splits each once). */
export function splitStartsWith(os: HostOs, path: SplitNativePath, prefix: SplitNativePath): boolean {
  if (!sameName(os, path.root, prefix.root) || prefix.segments.length > path.segments.length) return false;
  return prefix.segments.every((segment, i) => sameName(os, segment, path.segments[i] as string));
}

/** The segments of `path` below `prefix`, or null when `path` is not inside `prefix`. */
export function relativeSegments(os: HostOs, path: string, prefix: string): string[] | null {
  if (!pathStartsWith(os, path, prefix)) return null;
  const p = splitNativePath(os, path) as SplitNativePath;
  const q = splitNativePath(os, prefix) as SplitNativePath;
  return p.segments.slice(q.segments.length);
}

/** Case-aware equality of two absolute paths after lexical normalisation. */
export function samePath(os: HostOs, a: string, b: string): boolean {
  return pathStartsWith(os, a, b) && pathStartsWith(os, b, a);
}
