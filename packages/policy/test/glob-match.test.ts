import { describe, expect, it } from 'vitest';
import { globDeniesPath, globToRegExp, isAbsoluteGlob } from '../src/permissions/glob-match.js';

describe('deny globs', () => {
  it('knows absolute from relative patterns', () => {
    expect(isAbsoluteGlob('/w/*.env')).toBe(true);
    expect(isAbsoluteGlob('C:\\w\\*.env')).toBe(true);
    expect(isAbsoluteGlob('\\\\srv\\share\\*')).toBe(true);
    expect(isAbsoluteGlob('*.env')).toBe(false);
    expect(isAbsoluteGlob('**/x')).toBe(false);
  });
  it('keeps `*` and `?` within one segment', () => {
    expect(globToRegExp('/w/*.env', 'linux').test('/w/a.env')).toBe(true);
    expect(globToRegExp('/w/*.env', 'linux').test('/w/sub/a.env')).toBe(false);
    expect(globToRegExp('/w/?.txt', 'linux').test('/w/a.txt')).toBe(true);
    expect(globToRegExp('/w/?.txt', 'linux').test('/w/ab.txt')).toBe(false);
  });
  it('lets `**` span zero or more segments', () => {
    const re = globToRegExp('/w/**/*.pem', 'linux');
    expect(re.test('/w/a.pem')).toBe(true);
    expect(re.test('/w/x/y/a.pem')).toBe(true);
    expect(re.test('/v/a.pem')).toBe(false);
    expect(globToRegExp('/w/secret/**', 'linux').test('/w/secret')).toBe(true);
  });
  it('supports character classes and escapes regex characters', () => {
    expect(globToRegExp('/w/[ab].txt', 'linux').test('/w/b.txt')).toBe(true);
    expect(globToRegExp('/w/[!ab].txt', 'linux').test('/w/b.txt')).toBe(false);
    expect(globToRegExp('/w/a+(b).txt', 'linux').test('/w/a+(b).txt')).toBe(true);
    expect(globToRegExp('/w/a.txt', 'linux').test('/w/abtxt')).toBe(false);
  });
  it('denies descendants of a matching directory', () => {
    expect(globDeniesPath('/w/**/.ssh', '/w/home/.ssh/id_rsa', 'linux')).toBe(true);
    expect(globDeniesPath('/w/**/.ssh', '/w/home/ssh/id_rsa', 'linux')).toBe(false);
  });
  it('matches Windows paths case-insensitively with either separator', () => {
    expect(globDeniesPath('C:\\W\\**\\*.PEM', 'c:\\w\\k\\a.pem', 'windows')).toBe(true);
    expect(globDeniesPath('C:/w/*.pem', 'C:\\w\\a.pem', 'windows')).toBe(true);
  });
});
