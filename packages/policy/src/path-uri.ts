import { FsError } from './error-kinds.js';
import type { HostOs } from './host-os.js';
import { LIMITS } from './limits.js';
import { formatNativePath, splitNativePath } from './native-path.js';
import { decodePathBytes, encodePathBytes, hasLoneSurrogate } from './path-bytes.js';
import { assertPathLength } from './request-bounds.js';

/**
 * PathUri: every path on the wire is a `file:` URI. Parsing is strict because the
 * string comes from a model that may be prompt-injected: anything that could make two spellings
 * name different files, or smuggle a separator or NUL past a prefix check, is refused.
 *
 * Canonical form: `file://<host>/<segments>` with lower-case scheme and host, `localhost` dropped,
 * `.`/`..`/empty segments resolved lexically (so `/w/../etc` can never pass as "inside /w"), no
 * trailing slash, and every byte outside the unreserved/sub-delim set percent-encoded with
 * upper-case hex. Bytes that are not UTF-8 survive as escapes (see path-bytes.ts).
 */

/** A path URI taken apart once: formatting it (canonical URI, native path) needs no second parse. */
export interface ParsedPathUri {
  /** Lower-case host, '' for a local path. */
  host: string;
  /** Windows drive (`C:`) when the first segment is one, else null. */
  drive: string | null;
  /** Decoded segments (native-path strings, escapes for non-UTF-8 bytes). */
  segments: string[];
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const HOST = /^[A-Za-z0-9._-]+$/;
const RAW_DRIVE = /^([A-Za-z])[:|]$/;
// RFC 3986 pchar minus pct-encoded: these bytes need no escaping inside a path segment.
const SAFE_BYTE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;
// Control characters and backslashes are refused outright: a URL parser would silently strip the
// former and treat the latter as `/`, so two different-looking strings would name one file.

function hasForbiddenRaw(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit === 0x7f || unit === 0x5c) return true;
  }
  return false;
}

function invalid(message: string): FsError {
  return new FsError('invalid_params', `invalid URI: ${message}`);
}

/**
 * Longest URI decoded at all: each byte of the longest native path percent-encoded, and room for
 * the scheme, a host and `.`/`..` segments. Refused before any decoding, whatever it resolves to.
 */
export const PATH_URI_MAX_CHARS = 3 * LIMITS.pathMaxBytes + 1024;

function parse(input: string): ParsedPathUri {
  if (input.length > PATH_URI_MAX_CHARS) {
    throw new FsError(
      'invalid_params',
      `path URI is ${input.length} characters long; at most ${PATH_URI_MAX_CHARS} are allowed (a native path of at most ${LIMITS.pathMaxBytes} bytes)`,
    );
  }
  const scheme = SCHEME.exec(input);
  if (!scheme) throw invalid('relative URL without a base');
  const name = (scheme[1] as string).toLowerCase();
  if (name !== 'file') throw new FsError('invalid_params', `unsupported path URI scheme \`${name}\``);
  const rest = input.slice(scheme[0].length);
  if (hasForbiddenRaw(rest)) throw invalid('control characters and `\\` are not allowed in a path URI');
  if (rest.includes('#')) throw invalid('a path URI must not have a fragment');
  if (rest.includes('?')) throw invalid('a path URI must not have a query');

  let host = '';
  let path: string;
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash === -1 ? rest.slice(2) : rest.slice(2, slash);
    path = slash === -1 ? '/' : rest.slice(slash);
    if (authority.includes('@')) throw invalid('a path URI must not carry credentials');
    if (authority.includes(':')) throw invalid('a path URI must not have a port');
    if (authority !== '' && !HOST.test(authority)) throw invalid(`invalid host \`${authority}\``);
    host = authority.toLowerCase() === 'localhost' ? '' : authority.toLowerCase();
  } else if (rest.startsWith('/')) {
    path = rest;
  } else {
    throw invalid('a file URI must have an absolute path');
  }

  const rawSegments = path.split('/').slice(1);
  let drive: string | null = null;
  const first = rawSegments[0];
  const driveMatch = host === '' && first !== undefined ? RAW_DRIVE.exec(first) : null;
  if (driveMatch) {
    drive = `${(driveMatch[1] as string).toUpperCase()}:`;
    rawSegments.shift();
  }
  const segments: string[] = [];
  for (const raw of rawSegments) {
    const segment = decodeSegment(raw);
    if (segment === '' || segment === '.') continue;
    // `..` is resolved, never kept, and cannot climb above the root or a drive.
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const bytes = segments.reduce(
    (sum, segment) => sum + 1 + Buffer.byteLength(segment, 'utf8'),
    host.length + 2,
  );
  assertPathLength(bytes, input);
  return { host, drive, segments };
}

function decodeSegment(raw: string): string {
  if (!raw.includes('%')) {
    if (hasLoneSurrogate(raw)) throw invalid('unpaired surrogate in path URI');
    return raw;
  }
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; ) {
    if (raw[i] === '%') {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw invalid('malformed percent-encoding in path URI');
      const byte = Number.parseInt(hex, 16);
      // An encoded separator or NUL would let one segment name a different path than it appears to.
      if (byte === 0x2f) throw invalid('encoded `/` (%2F) is not allowed in a path URI');
      if (byte === 0x00) throw invalid('encoded NUL (%00) is not allowed in a path URI');
      bytes.push(byte);
      i += 3;
    } else {
      const codePoint = raw.codePointAt(i) as number;
      const char = String.fromCodePoint(codePoint);
      if (hasLoneSurrogate(char)) throw invalid('unpaired surrogate in path URI');
      bytes.push(...Buffer.from(char, 'utf8'));
      i += char.length;
    }
  }
  return decodePathBytes(Uint8Array.from(bytes));
}

function encodeSegment(segment: string, escapeDriveLike: boolean): string {
  let out = '';
  for (const byte of encodePathBytes(segment)) {
    const char = String.fromCharCode(byte);
    out += SAFE_BYTE.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  // A POSIX directory literally named `C:` at the root must not read back as a Windows drive.
  if (escapeDriveLike && RAW_DRIVE.test(out))
    out = `${out[0]}%${out.charCodeAt(1).toString(16).toUpperCase()}`;
  return out;
}

function format(uri: ParsedPathUri): string {
  const parts = uri.segments.map((segment, i) => encodeSegment(segment, i === 0 && uri.drive === null));
  // A bare drive is the drive's root; `file:///C:` would read as "current directory on C:" elsewhere.
  if (uri.drive !== null) parts.unshift(parts.length === 0 ? `${uri.drive}/` : uri.drive);
  return `file://${uri.host}/${parts.join('/')}`;
}

/** Validates a wire path and returns its canonical `file:` URI; throws FsError 'invalid_params'. */
export function parsePathUri(input: string): string {
  return format(parse(input));
}

/** Validates a wire path and returns it taken apart (see `nativePathOf`); throws FsError 'invalid_params'. */
export function readPathUri(input: string): ParsedPathUri {
  return parse(input);
}

function notNative(uri: string, os: HostOs): FsError {
  return new FsError('invalid_params', `'${uri}' is invalid on '${os}'`);
}

/**
 * The native absolute path a URI names on `os`. A URI of another platform (a drive or UNC host on
 * POSIX, a drive-less path on Windows) is refused rather than reinterpreted: guessing would point
 * the operation at a different file than the caller meant.
 */
export function pathUriToNative(uri: string, os: HostOs): string {
  return nativePathOf(parse(uri), os);
}

/** `pathUriToNative` for a URI already parsed. */
export function nativePathOf(parsed: ParsedPathUri, os: HostOs): string {
  if (os !== 'windows') {
    if (parsed.host !== '' || parsed.drive !== null) throw notNative(format(parsed), os);
    return formatNativePath(os, { root: '/', segments: parsed.segments });
  }
  // `\` and `:` would re-split the name (or open an alternate data stream); a trailing dot or space
  // is silently stripped by Win32, so `.git.` would reach `.git` while looking like another name.
  const windowsSafe = parsed.segments.every((s) => !/[\\:]|[. ]$/.test(s) && !hasLoneSurrogate(s));
  if (parsed.drive !== null && windowsSafe) {
    return formatNativePath(os, { root: parsed.drive, segments: parsed.segments });
  }
  if (parsed.host !== '' && parsed.segments.length > 0 && windowsSafe) {
    const [share, ...segments] = parsed.segments;
    return formatNativePath(os, { root: `\\\\${parsed.host}\\${share}`, segments });
  }
  throw notNative(format(parsed), os);
}

/** The canonical URI of a native absolute path; throws FsError 'invalid_params' when it is not absolute. */
export function nativeToPathUri(path: string, os: HostOs): string {
  const split = splitNativePath(os, path);
  if (!split) throw new FsError('invalid_params', `'${path}' is not an absolute path on '${os}'`);
  if (os !== 'windows') return format({ host: '', drive: null, segments: split.segments });
  if (split.segments.some(hasLoneSurrogate)) {
    throw new FsError('invalid_params', `'${path}' contains an unpaired UTF-16 surrogate`);
  }
  if (split.root.endsWith(':')) return format({ host: '', drive: split.root, segments: split.segments });
  const [server, share] = split.root.slice(2).split('\\') as [string, string];
  if (!HOST.test(server)) throw new FsError('invalid_params', `'${path}' has an unsupported UNC server name`);
  return format({ host: server.toLowerCase(), drive: null, segments: [share, ...split.segments] });
}
