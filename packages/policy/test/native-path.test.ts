import { describe, expect, it } from 'vitest';
import {
  isAbsoluteNative,
  joinPath,
  normalizeNativePath,
  parentPath,
  pathStartsWith,
  relativeSegments,
} from '../src/native-path.js';

describe('native paths (POSIX)', () => {
  it('recognises absolute paths', () => {
    expect(isAbsoluteNative('linux', '/a')).toBe(true);
    expect(isAbsoluteNative('linux', 'a/b')).toBe(false);
    expect(isAbsoluteNative('linux', 'C:\\x')).toBe(false);
    expect(isAbsoluteNative('linux', '/a\0b')).toBe(false);
  });
  it('joins and normalises lexically', () => {
    expect(joinPath('linux', '/w', 'a/b', '../c')).toBe('/w/a/c');
    expect(joinPath('linux', '/w', '/abs')).toBe('/w/abs');
    expect(joinPath('linux', '/', '..', 'x')).toBe('/x');
    expect(() => joinPath('linux', 'rel', 'x')).toThrow(TypeError);
  });
  it('finds parents and stops at the root', () => {
    expect(parentPath('linux', '/a/b')).toBe('/a');
    expect(parentPath('linux', '/a')).toBe('/');
    expect(parentPath('linux', '/')).toBeNull();
  });
  it('compares whole segments', () => {
    expect(pathStartsWith('linux', '/ab', '/a')).toBe(false);
    expect(pathStartsWith('linux', '/a/b', '/a')).toBe(true);
    expect(pathStartsWith('linux', '/a', '/a/')).toBe(true);
    expect(pathStartsWith('linux', '/a', '/')).toBe(true);
    expect(pathStartsWith('linux', '/A/b', '/a')).toBe(false);
    expect(pathStartsWith('linux', '/w/../etc', '/w')).toBe(false);
    expect(pathStartsWith('linux', 'a/b', 'a')).toBe(false);
  });
  it('gives the segments below a prefix', () => {
    expect(relativeSegments('linux', '/w/a/b', '/w')).toEqual(['a', 'b']);
    expect(relativeSegments('linux', '/x', '/w')).toBeNull();
  });
});

describe('native paths (Windows rules, tested on any host)', () => {
  it('recognises drive and UNC roots only', () => {
    expect(isAbsoluteNative('windows', 'C:\\x')).toBe(true);
    expect(isAbsoluteNative('windows', 'c:/x')).toBe(true);
    expect(isAbsoluteNative('windows', '\\\\server\\share')).toBe(true);
    expect(isAbsoluteNative('windows', '\\\\server')).toBe(false);
    expect(isAbsoluteNative('windows', 'C:x')).toBe(false);
    expect(isAbsoluteNative('windows', '\\x')).toBe(false);
    expect(isAbsoluteNative('windows', '/x')).toBe(false);
    expect(isAbsoluteNative('windows', '\\\\?\\C:\\x')).toBe(false);
    expect(isAbsoluteNative('windows', '\\\\.\\pipe\\x')).toBe(false);
  });
  it('normalises separators and drive case', () => {
    expect(normalizeNativePath('windows', 'c:/a//b/./c/..')).toBe('C:\\a\\b');
    expect(joinPath('windows', 'C:\\w', 'a/b')).toBe('C:\\w\\a\\b');
    expect(joinPath('windows', '\\\\srv\\share', 'x')).toBe('\\\\srv\\share\\x');
  });
  it('finds parents and stops at drive and share roots', () => {
    expect(parentPath('windows', 'C:\\a')).toBe('C:\\');
    expect(parentPath('windows', 'C:\\')).toBeNull();
    expect(parentPath('windows', '\\\\srv\\share\\a')).toBe('\\\\srv\\share');
    expect(parentPath('windows', '\\\\srv\\share')).toBeNull();
  });
  it('compares case-insensitively on whole segments', () => {
    expect(pathStartsWith('windows', 'C:\\W\\.GIT\\x', 'c:\\w\\.git')).toBe(true);
    expect(pathStartsWith('windows', 'C:\\wx', 'C:\\w')).toBe(false);
    expect(pathStartsWith('windows', 'D:\\w', 'C:\\w')).toBe(false);
    expect(pathStartsWith('windows', '\\\\SRV\\Share\\x', '\\\\srv\\share')).toBe(true);
    expect(pathStartsWith('windows', 'C:\\w\\secret. \\k', 'C:\\w\\Secret')).toBe(true);
    expect(pathStartsWith('linux', '/w/secret./k', '/w/secret')).toBe(false);
  });
});
