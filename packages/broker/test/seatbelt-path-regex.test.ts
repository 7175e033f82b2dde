import { describe, expect, it } from 'vitest';
import { exactPathRegex, globRegex, subtreePathRegex } from '../src/backends/macos/seatbelt-path-regex.js';

const matches = (regex: string, path: string) => new RegExp(regex).test(path);

describe('path regexes for APFS spellings', () => {
  it('escapes every regex metacharacter of the path', () => {
    const path = '/w/a.b+c*d?e(f)g[h]i{j}k|l^m$n\\o';
    const regex = exactPathRegex(path);
    expect(matches(regex, path)).toBe(true);
    expect(matches(regex, '/w/aXb+c*d?e(f)g[h]i{j}k|l^m$n\\o')).toBe(false);
    expect(matches(regex, '/w/a.bbc*d?e(f)g[h]i{j}k|l^m$n\\o')).toBe(false);
    expect(regex).toContain('\\.');
    expect(regex).toContain('\\(');
  });

  it('matches both cases of every letter, and nothing more', () => {
    const regex = subtreePathRegex('/Users/Dev/.git');
    for (const path of ['/Users/Dev/.git', '/users/dev/.GIT', '/USERS/DEV/.Git/config']) {
      expect(matches(regex, path), path).toBe(true);
    }
    for (const path of ['/Users/Dev/.gitx', '/Users/Dev/xgit', '/Users/Dev/.git2/x', '/Users/Dev']) {
      expect(matches(regex, path), path).toBe(false);
    }
  });

  it('matches the composed and decomposed forms of accented names, in both cases', () => {
    const regex = exactPathRegex('/w/Re\u0301sume\u0301');
    for (const spelling of ['Résumé', 'Re\u0301sume\u0301', 'RÉSUMÉ', 'résume\u0301']) {
      expect(matches(regex, `/w/${spelling}`), spelling).toBe(true);
    }
    expect(matches(regex, '/w/Resume')).toBe(false);
    // Multi-byte characters are alternatives, never members of a bracket expression.
    expect(regex).not.toMatch(/\[[^\]]*[\u0080-\uffff][^\]]*\]/u);
  });

  it('keeps a Hangul syllable and its jamo sequence together', () => {
    const regex = exactPathRegex('/w/\uD55C');
    expect(matches(regex, '/w/\uD55C')).toBe(true);
    expect(matches(regex, '/w/\u1112\u1161\u11AB')).toBe(true);
  });

  it('subtree regexes cover the path and its descendants; exact ones only the path', () => {
    expect(matches(subtreePathRegex('/w/x'), '/w/x/y/z')).toBe(true);
    expect(matches(exactPathRegex('/w/x'), '/w/x/y')).toBe(false);
    expect(matches(exactPathRegex('/w/x'), '/w/x')).toBe(true);
  });
});

describe('deny glob regexes', () => {
  it('translates ** across directories and * within one name', () => {
    const regex = globRegex('/w/**/*.pem');
    for (const path of ['/w/key.pem', '/w/a/b/KEY.PEM', '/w/a/key.pem/inner']) {
      expect(matches(regex, path), path).toBe(true);
    }
    for (const path of ['/w/key.pem.bak', '/v/key.pem', '/w/keypem']) {
      expect(matches(regex, path), path).toBe(false);
    }
    expect(matches(globRegex('/w/*.env'), '/w/sub/x.env')).toBe(false);
  });

  it('widens ? and classes to one or more characters of one name, never fewer', () => {
    const question = globRegex('/w/secret?.txt');
    expect(matches(question, '/w/secret1.txt')).toBe(true);
    expect(matches(question, '/w/secretä.txt')).toBe(true);
    expect(matches(question, '/w/secret/x.txt')).toBe(false);
    const klass = globRegex('/w/[ab]key');
    expect(matches(klass, '/w/akey')).toBe(true);
    expect(matches(klass, '/w/ékey')).toBe(true);
    expect(matches(klass, '/w/key')).toBe(false);
  });

  it('gives each brace alternative its own branch', () => {
    const regex = globRegex('/w/{keys/*.pem,*.key}');
    for (const path of ['/w/keys/a.pem', '/w/a.KEY', '/w/a.key/inner'])
      expect(matches(regex, path), path).toBe(true);
    for (const path of ['/w/a.pem', '/w/keys/a.key']) expect(matches(regex, path), path).toBe(false);
  });

  it('refuses what the policy refuses, instead of reading it as literal text', () => {
    expect(() => globRegex('/w/[x')).toThrow(
      'deny glob `/w/[x` cannot be enforced: it has a `[` without a matching `]`',
    );
  });
});
