import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import { parentPath } from '../native-path.js';
import {
  type CharMatcher,
  matchSegments,
  type NamePattern,
  type SegmentsPattern,
  StepBudget,
  splitAtStars,
} from './wildcard-match.js';

/**
 * Deny globs, in one syntax: the one ripgrep's globset reads with `literal_separator` (a later
 * feature hands the same patterns to ripgrep). `*` is any run of characters inside one path
 * segment, `?` one character, `[abc]` `[a-z]` `[!abc]` `[^abc]` one character of (or not of) a
 * class, `**` as a whole segment any number of segments (none included), `{a,b}` alternatives
 * (nestable, may hold `/`); on POSIX `\` makes the next character literal, on Windows it is a
 * separator like `/` and names compare case-insensitively.
 *
 * Matching is lexical, over normalised native absolute paths. A match on a directory denies all
 * below it, since the backends mask a matched directory whole; for the same reason a trailing
 * `/**` also matches the directory itself (globset: only its contents).
 *
 * A pattern that could never match what it spells, or whose meaning depends on the matcher, is
 * refused with `invalid_params` (a deny that silently denies nothing is the failure to avoid):
 * `.`/`..`/empty segments (paths are normalised, so they match nothing), a trailing `/`, a
 * leading `!`, extglobs, POSIX classes, unbalanced brackets or braces, `**` inside a name.
 *
 * Each brace-free alternative is matched by wildcard-match.ts, segment by segment, in time bounded
 * by the lengths of pattern and path (a regex engine would backtrack exponentially on some
 * patterns); nothing of a pattern reaches a regex but one character class at a time.
 */

export type GlobPiece =
  | { kind: 'literal'; text: string }
  | { kind: 'star' }
  | { kind: 'one' }
  /** `body` is a regex class body with every member escaped. */
  | { kind: 'class'; negated: boolean; body: string };

export type GlobSegment = { kind: 'globstar' } | { kind: 'name'; pieces: GlobPiece[] };

/** One brace-free spelling of a pattern. */
export interface GlobAlternative {
  /** `/`, `C:/`, `//server/share/`, or `` for a pattern relative to cwd. */
  root: string;
  segments: GlobSegment[];
}

export interface DenyGlob {
  pattern: string;
  alternatives: GlobAlternative[];
  /** Whether the pattern matches `path` exactly (native; on Windows with `\\` or `/`). */
  test(path: string): boolean;
}

/** Brace expansion past this is refused rather than matched alternative by alternative. */
const MAX_ALTERNATIVES = 256;

/** Characters escaped inside a regex class body. */
const CLASS_SPECIAL = new Set([...'\\]^-[']);

/** A pattern that does not depend on cwd: POSIX root, Windows drive, or UNC. */
export function isAbsoluteGlob(pattern: string): boolean {
  return pattern.startsWith('/') || pattern.startsWith('\\\\') || /^[A-Za-z]:[\\/]/.test(pattern);
}

type Refuse = (reason: string) => never;

type Token =
  | { t: 'char'; c: string }
  | { t: 'sep' }
  | { t: 'star' }
  | { t: 'globstar' }
  | { t: 'one' }
  | { t: 'class'; negated: boolean; body: string }
  | { t: 'brace'; alternatives: Token[][] };

class Lexer {
  private readonly chars: string[];
  private pos = 0;

  constructor(
    text: string,
    private readonly os: HostOs,
    private readonly refuse: Refuse,
  ) {
    this.chars = [...text];
  }

  /** The whole text as one sequence. */
  all(): Token[] {
    const tokens = this.sequence(false);
    if (this.pos < this.chars.length) this.refuse('it has a `}` without a matching `{`');
    return tokens;
  }

  private sequence(inBrace: boolean): Token[] {
    const tokens: Token[] = [];
    while (this.pos < this.chars.length) {
      const c = this.chars[this.pos] as string;
      const next = this.chars[this.pos + 1];
      if (inBrace && (c === ',' || c === '}')) return tokens;
      if (c === '}') this.refuse('it has a `}` without a matching `{`');
      if (c === ']') this.refuse('it has a `]` without a matching `[` (write `[]]` for the character)');
      if ('?*+@!'.includes(c) && next === '(') {
        this.refuse(
          `\`${c}(\` is extglob syntax, which deny globs do not have (write \`[(]\` for the character)`,
        );
      }
      this.pos += 1;
      if (c === '/' || (c === '\\' && this.os === 'windows')) tokens.push({ t: 'sep' });
      else if (c === '\\') tokens.push({ t: 'char', c: this.escaped() });
      else if (c === '*' && next === '*') {
        this.pos += 1;
        tokens.push({ t: 'globstar' });
      } else if (c === '*') tokens.push({ t: 'star' });
      else if (c === '?') tokens.push({ t: 'one' });
      else if (c === '[') tokens.push(this.characterClass());
      else if (c === '{') tokens.push(this.brace());
      else tokens.push({ t: 'char', c });
    }
    if (inBrace) this.refuse('it has a `{` without a matching `}`');
    return tokens;
  }

  private escaped(): string {
    const c = this.chars[this.pos];
    if (c === undefined) this.refuse('it ends with a lone `\\`');
    this.pos += 1;
    return c;
  }

  private brace(): Token {
    const alternatives: Token[][] = [];
    for (;;) {
      alternatives.push(this.sequence(true));
      const c = this.chars[this.pos];
      this.pos += 1;
      if (c === '}') return { t: 'brace', alternatives };
    }
  }

  private characterClass(): Token {
    const negated = this.chars[this.pos] === '!' || this.chars[this.pos] === '^';
    if (negated) this.pos += 1;
    let body = '';
    let first = true;
    for (;;) {
      let c = this.chars[this.pos];
      if (c === undefined) this.refuse('it has a `[` without a matching `]`');
      this.pos += 1;
      if (c === ']' && !first) return { t: 'class', negated, body };
      first = false;
      if (c === '[' && this.chars[this.pos] === ':')
        this.refuse('POSIX classes such as `[[:alpha:]]` are not supported');
      if (c === '\\' && this.os !== 'windows') c = this.escaped();
      const rangeEnd = this.chars[this.pos] === '-' ? this.chars[this.pos + 1] : undefined;
      let high = c;
      if (rangeEnd !== undefined && rangeEnd !== ']') {
        this.pos += 2;
        high = rangeEnd === '\\' && this.os !== 'windows' ? this.escaped() : rangeEnd;
        if ((high.codePointAt(0) as number) < (c.codePointAt(0) as number))
          this.refuse(`the class range \`${c}-${high}\` is reversed`);
      }
      if (classIncludesSeparator(c, high, this.os))
        this.refuse('a `[...]` class cannot match a path separator');
      body += c === high ? classMember(c) : `${classMember(c)}-${classMember(high)}`;
    }
  }
}

function classIncludesSeparator(low: string, high: string, os: HostOs): boolean {
  const separators = os === 'windows' ? ['/', '\\'] : ['/'];
  return separators.some((s) => low <= s && s <= high);
}

function classMember(c: string): string {
  return CLASS_SPECIAL.has(c) ? `\\${c}` : c;
}

/** Every brace-free sequence a token list stands for. */
function expandBraces(tokens: Token[], refuse: Refuse): Token[][] {
  let results: Token[][] = [[]];
  for (const token of tokens) {
    if (token.t !== 'brace') {
      for (const result of results) result.push(token);
      continue;
    }
    const options = token.alternatives.flatMap((alternative) => expandBraces(alternative, refuse));
    if (results.length * options.length > MAX_ALTERNATIVES)
      refuse(`its braces expand to more than ${MAX_ALTERNATIVES} alternatives`);
    results = results.flatMap((result) => options.map((option) => [...result, ...option]));
  }
  return results;
}

/** Splits the root off the pattern text (Windows separators already turned into `/`). */
function splitRoot(text: string, os: HostOs, refuse: Refuse): { root: string; rest: string } {
  if (os !== 'windows')
    return text.startsWith('/') ? { root: '/', rest: text.slice(1) } : { root: '', rest: text };
  const drive = /^[A-Za-z]:\//.exec(text);
  if (drive) return { root: drive[0], rest: text.slice(drive[0].length) };
  const unc = /^\/\/([^/]+)\/([^/]+)\//.exec(text);
  if (unc) {
    if (/[*?[\]{}]/.test(unc[0])) refuse('the UNC server and share must be spelled literally');
    return { root: unc[0], rest: text.slice(unc[0].length) };
  }
  if (text.startsWith('/')) refuse('a rooted Windows pattern needs a drive letter or a UNC share');
  return { root: '', rest: text };
}

function segmentsOf(tokens: Token[], os: HostOs, refuse: Refuse): GlobSegment[] {
  const raw: Token[][] = [[]];
  for (const token of tokens) {
    if (token.t === 'sep') raw.push([]);
    else raw[raw.length - 1]?.push(token);
  }
  return raw.map((segment, i): GlobSegment => {
    if (segment.length === 0) {
      refuse(
        i === raw.length - 1 && i > 0
          ? 'it ends with a separator; a directory-only match cannot be enforced exactly (drop it: a matching directory is denied with everything in it)'
          : 'it has an empty path segment',
      );
    }
    if (segment.some((token) => token.t === 'globstar')) {
      if (segment.length > 1) refuse('`**` must be a whole path segment (`a/**/b`); use `*` inside a name');
      return { kind: 'globstar' };
    }
    const pieces: GlobPiece[] = [];
    for (const token of segment) {
      const last = pieces[pieces.length - 1];
      if (token.t === 'char' && last?.kind === 'literal') last.text += token.c;
      else if (token.t === 'char') pieces.push({ kind: 'literal', text: token.c });
      // Two stars from different alternatives side by side mean one star, never a globstar.
      else if (token.t === 'star' && last?.kind !== 'star') pieces.push({ kind: 'star' });
      else if (token.t === 'one') pieces.push({ kind: 'one' });
      else if (token.t === 'class') pieces.push({ kind: 'class', negated: token.negated, body: token.body });
    }
    const only = pieces.length === 1 && pieces[0]?.kind === 'literal' ? pieces[0].text : null;
    if (only === '.' || only === '..')
      refuse(
        `it has a \`${only}\` segment, which never matches a normalised path (spell the path without it)`,
      );
    if (os === 'windows' && pieces.some((piece) => piece.kind === 'literal' && piece.text.includes(':')))
      refuse('`:` cannot appear in a Windows file name');
    return { kind: 'name', pieces };
  });
}

/** One alternative, ready to match: its root and its segments as wildcard patterns. */
interface CompiledAlternative {
  root: string;
  segments: SegmentsPattern;
}

function charMatcher(piece: Extract<GlobPiece, { kind: 'one' | 'class' }>, os: HostOs): CharMatcher {
  if (piece.kind === 'one') return { kind: 'any' };
  // One character against one class: a regex without a quantifier has nothing to backtrack over.
  const regex = new RegExp(`^[${piece.negated ? '^' : ''}${piece.body}]$`, os === 'windows' ? 'iu' : 'u');
  return { kind: 'class', test: (char) => regex.test(char) };
}

function namePattern(pieces: readonly GlobPiece[], os: HostOs): NamePattern {
  const units = pieces.flatMap((piece): Array<CharMatcher | 'star'> => {
    if (piece.kind === 'star') return ['star'];
    if (piece.kind === 'literal') return [...piece.text].map((char) => ({ kind: 'literal', char }));
    return [charMatcher(piece, os)];
  });
  return splitAtStars(
    units,
    (unit) => unit === 'star',
    (unit) => unit as CharMatcher,
  );
}

function compileAlternative(alternative: GlobAlternative, os: HostOs): CompiledAlternative {
  return {
    root: os === 'windows' ? alternative.root.toLowerCase() : alternative.root,
    segments: splitAtStars(
      alternative.segments,
      (segment) => segment.kind === 'globstar',
      (segment) => namePattern((segment as Extract<GlobSegment, { kind: 'name' }>).pieces, os),
    ),
  };
}

/** Whether one of `alternatives` matches `path` (native; absolute, or relative as the pattern is). */
function testPath(
  pattern: string,
  alternatives: readonly CompiledAlternative[],
  path: string,
  os: HostOs,
): boolean {
  const subject = os === 'windows' ? path.replaceAll('\\', '/') : path;
  const budget = new StepBudget(pattern);
  return alternatives.some((alternative) => {
    const head = subject.slice(0, alternative.root.length);
    if ((os === 'windows' ? head.toLowerCase() : head) !== alternative.root) return false;
    const rest = subject.slice(alternative.root.length);
    if (alternative.root === '' && rest.startsWith('/')) return false;
    const names = rest === '' ? [] : rest.split('/').map((name) => [...name]);
    return matchSegments(alternative.segments, names, os === 'windows', budget);
  });
}

function compile(pattern: string, os: HostOs): DenyGlob {
  const refuse: Refuse = (reason) => {
    throw new FsError('invalid_params', `deny glob \`${pattern}\` cannot be enforced: ${reason}`);
  };
  if (pattern === '') refuse('it is empty');
  if (pattern.startsWith('!')) refuse('a leading `!` would negate it, and a deny cannot be negated');
  const text = os === 'windows' ? pattern.replaceAll('\\', '/') : pattern;
  const { root, rest } = splitRoot(text, os, refuse);
  if (rest === '') refuse('it names nothing below its root');
  const alternatives: GlobAlternative[] = [];
  for (const tokens of expandBraces(new Lexer(rest, os, refuse).all(), refuse)) {
    const segments = segmentsOf(tokens, os, refuse);
    alternatives.push({ root, segments });
    // The directory a trailing `/**` names is masked whole, so it matches too.
    if (segments.length > 1 && segments[segments.length - 1]?.kind === 'globstar')
      alternatives.push({ root, segments: segments.slice(0, -1) });
  }
  const compiledAlternatives = alternatives.map((alternative) => compileAlternative(alternative, os));
  return { pattern, alternatives, test: (path) => testPath(pattern, compiledAlternatives, path, os) };
}

/** Compiled patterns by OS and text: the pre-check matches every path of a request against each. */
const compiled = new Map<string, DenyGlob>();
const MAX_COMPILED = 512;

/**
 * Parses and compiles a deny glob; throws `invalid_params` naming the pattern and the reason when
 * it cannot be enforced. Every consumer (pre-check, plan, each backend) goes through here, so all
 * refuse the same patterns.
 */
export function parseDenyGlob(pattern: string, os: HostOs): DenyGlob {
  const key = `${os}\0${pattern}`;
  let glob = compiled.get(key);
  if (glob === undefined) {
    glob = compile(pattern, os);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, glob);
  }
  return glob;
}

/** True when `path` or one of its ancestors matches the absolute `pattern`. */
export function globDeniesPath(pattern: string, path: string, os: HostOs): boolean {
  const glob = parseDenyGlob(pattern, os);
  for (let p: string | null = path; p !== null; p = parentPath(os, p)) if (glob.test(p)) return true;
  return false;
}

/** The leading segments of an alternative that hold no wildcard, as a path, and the segments after them. */
export function globLiteralPrefix(alternative: GlobAlternative): { prefix: string; rest: GlobSegment[] } {
  const literal: string[] = [];
  for (const segment of alternative.segments) {
    const only = segment.kind === 'name' && segment.pieces.length === 1 ? segment.pieces[0] : undefined;
    if (only?.kind !== 'literal') break;
    literal.push(only.text);
  }
  return { prefix: alternative.root + literal.join('/'), rest: alternative.segments.slice(literal.length) };
}
