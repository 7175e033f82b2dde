import fc from 'fast-check';
import picomatch from 'picomatch/posix.js';
import { describe, expect, it } from 'vitest';
import { FsError } from '../src/error-kinds.js';
import {
  globDeniesPath,
  globLiteralPrefix,
  isAbsoluteGlob,
  parseDenyGlob,
} from '../src/permissions/glob-match.js';

const matches = (pattern: string, path: string) => parseDenyGlob(pattern, 'linux').test(path);

function refusal(pattern: string, os: 'linux' | 'windows' = 'linux'): { kind: string; message: string } {
  try {
    parseDenyGlob(pattern, os);
  } catch (error) {
    if (error instanceof FsError) return { kind: error.kind, message: error.message };
    throw error;
  }
  throw new Error(`${pattern} was accepted`);
}

/** Spellings that deny nothing (or something other than they say), each with the reason given. */
const UNENFORCEABLE_GLOBS: ReadonlyArray<readonly [pattern: string, reason: string]> = [
  ['', 'it is empty'],
  ['!/w/*.env', 'a leading `!` would negate it'],
  ['/w/a/../secrets/**', 'it has a `..` segment'],
  ['../secrets/*', 'it has a `..` segment'],
  ['./keys/*', 'it has a `.` segment'],
  ['/w/{.,x}/key', 'it has a `.` segment'],
  ['keys/', 'it ends with a separator'],
  ['/w/{a/,b}', 'it ends with a separator'],
  ['/w//key', 'it has an empty path segment'],
  ['/w/{a,b', 'a `{` without a matching `}`'],
  ['/w/a}', 'a `}` without a matching `{`'],
  ['/w/[ab', 'a `[` without a matching `]`'],
  ['/w/a]', 'a `]` without a matching `[`'],
  ['/w/!(x).pem', '`!(` is extglob syntax'],
  ['/w/@(a|b).pem', '`@(` is extglob syntax'],
  ['/w/+(a).pem', '`+(` is extglob syntax'],
  ['/w/[[:alpha:]].pem', 'POSIX classes'],
  ['/w/a**/x', '`**` must be a whole path segment'],
  ['/w/[.-0]x', 'cannot match a path separator'],
  ['/w/[z-a]', 'reversed'],
];

describe('deny glob syntax', () => {
  it('knows absolute from relative patterns', () => {
    expect(isAbsoluteGlob('/w/*.env')).toBe(true);
    expect(isAbsoluteGlob('C:\\w\\*.env')).toBe(true);
    expect(isAbsoluteGlob('\\\\srv\\share\\*')).toBe(true);
    expect(isAbsoluteGlob('*.env')).toBe(false);
    expect(isAbsoluteGlob('**/x')).toBe(false);
  });
  it('keeps `*` and `?` within one segment', () => {
    expect(matches('/w/*.env', '/w/a.env')).toBe(true);
    expect(matches('/w/*.env', '/w/.env')).toBe(true);
    expect(matches('/w/*.env', '/w/sub/a.env')).toBe(false);
    expect(matches('/w/?.txt', '/w/a.txt')).toBe(true);
    expect(matches('/w/?.txt', '/w/ab.txt')).toBe(false);
    expect(matches('/w/?', '/w//')).toBe(false);
  });
  it('counts `?` and classes in code points', () => {
    expect(matches('/w/?.pem', '/w/😀.pem')).toBe(true);
    expect(matches('/w/[😀é].pem', '/w/é.pem')).toBe(true);
  });
  it('lets `**` span zero or more whole segments', () => {
    expect(matches('/w/**/*.pem', '/w/a.pem')).toBe(true);
    expect(matches('/w/**/*.pem', '/w/x/y/a.pem')).toBe(true);
    expect(matches('/w/**/*.pem', '/v/a.pem')).toBe(false);
    expect(matches('/w/**/*.pem', '/wx/a.pem')).toBe(false);
    expect(matches('/w/secret/**', '/w/secret')).toBe(true);
    expect(matches('/w/secret/**', '/w/secret/a/b')).toBe(true);
    expect(matches('/w/secret/**', '/w/secrets')).toBe(false);
  });
  it('expands braces, nested and across separators', () => {
    expect(matches('/w/**/*.{pem,key}', '/w/a/b.pem')).toBe(true);
    expect(matches('/w/**/*.{pem,key}', '/w/b.key')).toBe(true);
    expect(matches('/w/**/*.{pem,key}', '/w/b.pe')).toBe(false);
    expect(matches('/w/{a,{b,c}d}', '/w/cd')).toBe(true);
    expect(matches('/w/{a,{b,c}d}', '/w/c')).toBe(false);
    expect(matches('/w/{x/y,z}/k', '/w/x/y/k')).toBe(true);
    expect(matches('/w/{x/y,z}/k', '/w/z/k')).toBe(true);
    expect(matches('/w/key{,.bak}', '/w/key')).toBe(true);
    expect(matches('/w/key{,.bak}', '/w/key.bak')).toBe(true);
    expect(matches('/w/{1..3}', '/w/1..3')).toBe(true);
    expect(matches('/w/{1..3}', '/w/2')).toBe(false);
    expect(parseDenyGlob('/w/{a,b}/{c,d}', 'linux').alternatives).toHaveLength(4);
  });
  it('supports classes, negated with `!` or `^`, never matching a separator', () => {
    expect(matches('/w/[ab].txt', '/w/b.txt')).toBe(true);
    expect(matches('/w/[!ab].txt', '/w/b.txt')).toBe(false);
    expect(matches('/w/[!ab].txt', '/w/c.txt')).toBe(true);
    expect(matches('/w/[!ab].txt', '/w/!.txt')).toBe(true);
    expect(matches('/w/[^ab]x', '/w/cx')).toBe(true);
    expect(matches('/w/x[!a]y', '/w/x/y')).toBe(false);
    expect(matches('/w/[]a-c]', '/w/]')).toBe(true);
    expect(matches('/w/[]a-c]', '/w/b')).toBe(true);
    expect(matches('/w/[]a-c]', '/w/-')).toBe(false);
    expect(matches('/w/[a-]', '/w/-')).toBe(true);
    expect(matches('/w/[*]', '/w/*')).toBe(true);
    expect(matches('/w/[*]', '/w/x')).toBe(false);
  });
  it('takes every other character literally, whatever picomatch would make of it', () => {
    expect(matches('/w/a (copy).txt', '/w/a (copy).txt')).toBe(true);
    expect(matches('/w/a (copy).txt', '/w/a copy.txt')).toBe(false);
    expect(matches('/w/a|b', '/w/a|b')).toBe(true);
    expect(matches('/w/a|b', 'b')).toBe(false);
    expect(matches('/w/"q"', '/w/"q"')).toBe(true);
    expect(matches('/w/"q"', '/w/q')).toBe(false);
    expect(matches('/w/a+b@c!d$e^f', '/w/a+b@c!d$e^f')).toBe(true);
    expect(matches('/w/a.txt', '/w/abtxt')).toBe(false);
    expect(matches('/w/a\\*b', '/w/a*b')).toBe(true);
    expect(matches('/w/a\\*b', '/w/axb')).toBe(false);
    expect(matches('/w/a\\\\b', '/w/a\\b')).toBe(true);
    expect(matches('/w/a\\!(b)', '/w/a!(b)')).toBe(true);
  });
  it('denies descendants of a matching directory', () => {
    expect(globDeniesPath('/w/**/.ssh', '/w/home/.ssh/id_rsa', 'linux')).toBe(true);
    expect(globDeniesPath('/w/**/.ssh', '/w/home/ssh/id_rsa', 'linux')).toBe(false);
  });
  it('matches Windows paths case-insensitively with either separator', () => {
    expect(globDeniesPath('C:\\W\\**\\*.PEM', 'c:\\w\\k\\a.pem', 'windows')).toBe(true);
    expect(globDeniesPath('C:/w/*.pem', 'C:\\w\\a.pem', 'windows')).toBe(true);
    expect(globDeniesPath('C:\\w\\*.{PEM,key}', 'C:\\W\\A.KEY', 'windows')).toBe(true);
    expect(globDeniesPath('\\\\srv\\share\\*.pem', '\\\\SRV\\share\\a.pem', 'windows')).toBe(true);
    expect(globDeniesPath('C:/w/*.pem', 'C:\\w\\a.pem', 'linux')).toBe(false);
    expect(matches('/W/*.pem', '/w/a.pem')).toBe(false);
  });
  it('matches whole paths only: no prefix, no suffix, no line break', () => {
    expect(matches('/w/**/*.{pem,key}', '/w/a/b.key')).toBe(true);
    expect(matches('/w/**/*.{pem,key}', '/w/b.key')).toBe(true);
    expect(matches('/w/**/*.{pem,key}', '/x/w/a/b.key')).toBe(false);
    expect(matches('/w/**/*.{pem,key}', '/w/a/b.keys')).toBe(false);
    expect(matches('/w/**/*.{pem,key}', '/w/a/b.key\n')).toBe(false);
    expect(matches('/w/a*b*c', '/w/abc')).toBe(true);
    expect(matches('/w/a*b*c', '/w/aXbYbZc')).toBe(true);
    expect(matches('/w/a*b*c', '/w/acb')).toBe(false);
    expect(matches('/w/*/x/**/y', '/w/q/x/y')).toBe(true);
    expect(matches('/w/*/x/**/y', '/w/q/r/x/y')).toBe(false);
    expect(matches('/w/?.txt', '/w/é.txt')).toBe(true);
    expect(matches('/w/?.txt', '/w/😀.txt')).toBe(true);
    expect(matches('/w/[!a]*', '/w/bcd')).toBe(true);
    expect(matches('/w/[!a]*', '/w/acd')).toBe(false);
  });
  it('answers pathological patterns at once (no backtracking), or refuses past a step budget', () => {
    const name = 'a'.repeat(255);
    expect(matches('/w/**/*a*a*a*a*a*a*a*a*a*a*a*a*b', `/w/${Array(40).fill(name).join('/')}`)).toBe(false);
    expect(matches('/w/**/*a*a*a*a*a*a*a*a*a*a*a*a*b', `/w/${name}b`)).toBe(true);
    expect(matches(`/w/**/${'*a'.repeat(60)}*b`, `/w/${name}`)).toBe(false);
    expect(matches(`/w/${'**/a/'.repeat(50)}b`, `/w/${'a/'.repeat(500)}c`)).toBe(false);
    // Built to need (name x run) steps on every segment: refused by the budget, typed.
    const heavy = `/w/**/*${'a'.repeat(200)}b*/**`;
    const path = `/w/${Array(200).fill(name).join('/')}`;
    expect(() => matches(heavy, path)).toThrow(/takes more than 2000000 steps/);
    try {
      matches(heavy, path);
    } catch (error) {
      expect((error as FsError).kind).toBe('invalid_params');
    }
  });
  it('splits each alternative into its literal prefix and the rest', () => {
    const [first, second] = parseDenyGlob('/w/{src,lib}/**/*.env', 'linux').alternatives;
    expect(first && globLiteralPrefix(first).prefix).toBe('/w/src');
    expect(second && globLiteralPrefix(second).rest.map((s) => s.kind)).toEqual(['globstar', 'name']);
    const literal = parseDenyGlob('/w/.env', 'linux').alternatives[0];
    expect(literal && globLiteralPrefix(literal)).toEqual({ prefix: '/w/.env', rest: [] });
  });
});

describe('deny glob refusals', () => {
  it.each(UNENFORCEABLE_GLOBS)('refuses %j with invalid_params naming it and why', (pattern, reason) => {
    const { kind, message } = refusal(pattern);
    expect(kind).toBe('invalid_params');
    expect(message).toContain(`deny glob \`${pattern}\` cannot be enforced`);
    expect(message).toContain(reason);
  });
  it('refuses the same spellings on Windows, and Windows-only ones', () => {
    for (const [pattern, reason] of UNENFORCEABLE_GLOBS) {
      const windowsPattern = pattern.replace(/^\/w\//, 'C:\\w\\');
      expect(refusal(windowsPattern, 'windows').message).toContain(reason);
    }
    expect(refusal('\\w\\*.pem', 'windows').message).toContain('needs a drive letter or a UNC share');
    expect(refusal('C:\\w\\a:b', 'windows').message).toContain('`:` cannot appear');
    expect(refusal('C:\\w\\keys\\', 'windows').message).toContain('it ends with a separator');
  });
  it('refuses braces that expand past the bound', () => {
    const pattern = `/w/${'{a,b}'.repeat(9)}`;
    expect(refusal(pattern).message).toContain('more than 256 alternatives');
  });
});

describe('the matcher against picomatch (the regex it replaced)', () => {
  it('agrees on every small pattern and path', () => {
    const piece = fc.constantFrom('a', 'b', '*', '?', '[ab]', '[^a]', '{a,b}', '{a*,b}');
    const name = fc.array(piece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''));
    const segment = fc.oneof({ weight: 4, arbitrary: name }, { weight: 1, arbitrary: fc.constant('**') });
    const pattern = fc
      .array(segment, { minLength: 1, maxLength: 4 })
      .filter((segments) => !segments.every((s) => s === '**'))
      .map((segments) => `/w/${segments.join('/')}`);
    const path = fc
      .array(
        fc.stringMatching(/^[ab.]{1,4}$/).filter((name) => name !== '.' && name !== '..'),
        { minLength: 0, maxLength: 5 },
      )
      .map((names) => `/w${names.map((n) => `/${n}`).join('')}`);
    fc.assert(
      fc.property(pattern, path, (pattern, path) => {
        // Stars side by side from two pieces make a `**` inside a name, which is refused.
        fc.pre(!/\*\*[^/]|[^/]\*\*/.test(pattern));
        // Each brace piece doubles the alternatives; past 8 of them the bound refuses the pattern
        // (tested above), so there is nothing to compare.
        fc.pre((pattern.match(/\{/g) ?? []).length <= 8);
        const regex = picomatch.makeRe(pattern, {
          dot: true,
          noextglob: true,
          nonegate: true,
          strictSlashes: true,
          literalBrackets: false,
        });
        // A trailing `/**` also matches the directory it names (it is masked whole).
        const whole = pattern.endsWith('/**') && regex.test(`${path}/x`) && !path.endsWith('/w');
        expect(matches(pattern, path), `${pattern} ${path}`).toBe(regex.test(path) || whole);
      }),
      { numRuns: 3000 },
    );
  });
});
