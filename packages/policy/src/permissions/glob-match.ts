import type { HostOs } from '../host-os.js';
import { parentPath } from '../native-path.js';

/**
 * Deny-only glob patterns (`*` within a segment, `**` across segments, `?`, `[...]`), matched
 * lexically against native absolute paths. A match on a directory denies everything below it,
 * mirroring how the backends mask a matched directory as a whole.
 */

/** A pattern that does not depend on cwd: POSIX root, Windows drive, or UNC. */
export function isAbsoluteGlob(pattern: string): boolean {
  return pattern.startsWith('/') || pattern.startsWith('\\\\') || /^[A-Za-z]:[\\/]/.test(pattern);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

export function globToRegExp(pattern: string, os: HostOs): RegExp {
  const p = os === 'windows' ? pattern.replaceAll('\\', '/') : pattern;
  let re = '';
  let i = 0;
  while (i < p.length) {
    const c = p[i] as string;
    if (c === '/' && p.slice(i + 1) === '**') {
      re += '(?:/.*)?';
      break;
    }
    if (c === '*' && p[i + 1] === '*') {
      const slashAfter = p[i + 2] === '/';
      re += slashAfter ? '(?:.*/)?' : '.*';
      i += slashAfter ? 3 : 2;
      continue;
    }
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[' && p.indexOf(']', i + 2) !== -1) {
      const end = p.indexOf(']', i + 2);
      const body = p.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      const members = (negated ? body.slice(1) : body).replace(/[\\\]^]/g, '\\$&');
      re += negated ? `[^/${members}]` : `[${members}]`;
      i = end + 1;
      continue;
    } else re += escapeRegExp(c);
    i += 1;
  }
  return new RegExp(`^${re}$`, os === 'windows' ? 'i' : '');
}

/** True when `path` or one of its ancestors matches the absolute `pattern`. */
export function globDeniesPath(pattern: string, path: string, os: HostOs): boolean {
  const regex = globToRegExp(pattern, os);
  for (let p: string | null = path; p !== null; p = parentPath(os, p)) {
    if (regex.test(os === 'windows' ? p.replaceAll('\\', '/') : p)) return true;
  }
  return false;
}
