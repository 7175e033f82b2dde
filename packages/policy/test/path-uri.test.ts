import { describe, expect, it } from 'vitest';
import { FsError } from '../src/error-kinds.js';
import { LIMITS } from '../src/limits.js';
import { nativeToPathUri, parsePathUri, pathUriToNative } from '../src/path-uri.js';

function rejection(fn: () => unknown): { kind: string; message: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    const e = error as FsError;
    return { kind: e.kind, message: e.message };
  }
  throw new Error('expected a rejection');
}

describe('parsePathUri rejections', () => {
  it('rejects a native absolute path like the reference', () => {
    expect(rejection(() => parsePathUri('/tmp/x'))).toEqual({
      kind: 'invalid_params',
      message: 'invalid URI: relative URL without a base',
    });
  });
  it('rejects a relative path like the reference', () => {
    expect(rejection(() => parsePathUri('ro/hello.txt')).message).toBe(
      'invalid URI: relative URL without a base',
    );
  });
  it('rejects the empty string', () => {
    expect(rejection(() => parsePathUri('')).message).toBe('invalid URI: relative URL without a base');
  });
  it('rejects another scheme naming it', () => {
    expect(rejection(() => parsePathUri('http://example.com/x'))).toEqual({
      kind: 'invalid_params',
      message: 'unsupported path URI scheme `http`',
    });
  });
  it('rejects a query', () => {
    expect(rejection(() => parsePathUri('file:///a?b=1')).message).toMatch(/query/);
  });
  it('rejects a fragment', () => {
    expect(rejection(() => parsePathUri('file:///a#frag')).message).toMatch(/fragment/);
  });
  it('rejects a port', () => {
    expect(rejection(() => parsePathUri('file://server:445/share/x')).message).toMatch(/port/);
  });
  it('rejects credentials', () => {
    expect(rejection(() => parsePathUri('file://user:pw@server/share')).message).toMatch(/credentials/);
  });
  it('rejects an encoded slash in either case', () => {
    expect(rejection(() => parsePathUri('file:///a%2Fb')).message).toMatch(/%2F/);
    expect(rejection(() => parsePathUri('file:///a%2fb')).message).toMatch(/%2F/);
  });
  it('rejects an encoded NUL', () => {
    expect(rejection(() => parsePathUri('file:///a%00b')).message).toMatch(/NUL/);
  });
  it('rejects malformed percent-encoding', () => {
    expect(rejection(() => parsePathUri('file:///a%zz')).message).toMatch(/percent/);
    expect(rejection(() => parsePathUri('file:///a%4')).message).toMatch(/percent/);
  });
  it('rejects raw control characters and backslashes', () => {
    expect(rejection(() => parsePathUri('file:///a\nb')).kind).toBe('invalid_params');
    expect(rejection(() => parsePathUri('file:///a\\b')).kind).toBe('invalid_params');
  });
  it('rejects a drive-relative or rootless file URI', () => {
    expect(rejection(() => parsePathUri('file:a/b')).message).toMatch(/absolute/);
  });
  it('rejects an invalid host', () => {
    expect(rejection(() => parsePathUri('file://[::1]/x')).kind).toBe('invalid_params');
  });
});

describe('parsePathUri canonical form', () => {
  it.each([
    ['file://localhost/x', 'file:///x'],
    ['file://LOCALHOST/x', 'file:///x'],
    ['file:/x', 'file:///x'],
    ['FILE:///x', 'file:///x'],
    ['File:///x/', 'file:///x'],
    ['file:///a//b/./c/../d', 'file:///a/b/d'],
    ['file:///a/%2E%2E/b', 'file:///b'],
    ['file:///../../etc', 'file:///etc'],
    ['file:///a%20b', 'file:///a%20b'],
    ['file:///a b', 'file:///a%20b'],
    ['file:///%7euser', 'file:///~user'],
    ['file:///caf%c3%a9', 'file:///caf%C3%A9'],
    ['file:///café', 'file:///caf%C3%A9'],
    ['file:///a%FFb', 'file:///a%FFb'],
    ['file:///', 'file:///'],
    ['file://', 'file:///'],
    ['file:///c:/x', 'file:///C:/x'],
    ['file:///C|/x', 'file:///C:/x'],
    ['file:///C:/../..', 'file:///C:/'],
    ['file://Server/Share/x', 'file://server/Share/x'],
  ])('%s -> %s', (input, expected) => {
    expect(parsePathUri(input)).toBe(expected);
  });
});

describe('pathUriToNative', () => {
  it('converts POSIX URIs', () => {
    expect(pathUriToNative('file:///home/u/x', 'linux')).toBe('/home/u/x');
    expect(pathUriToNative('file:///', 'linux')).toBe('/');
    expect(pathUriToNative('file:///a%20b/c%25d', 'macos')).toBe('/a b/c%d');
  });
  it('refuses a Windows drive URI on linux with the exact message', () => {
    expect(rejection(() => pathUriToNative('file:///C:/x', 'linux'))).toEqual({
      kind: 'invalid_params',
      message: "'file:///C:/x' is invalid on 'linux'",
    });
  });
  it('refuses a UNC host on linux and macos', () => {
    expect(rejection(() => pathUriToNative('file://server/share/x', 'linux')).message).toBe(
      "'file://server/share/x' is invalid on 'linux'",
    );
    expect(rejection(() => pathUriToNative('file://server/share/x', 'macos')).message).toBe(
      "'file://server/share/x' is invalid on 'macos'",
    );
  });
  it('refuses a POSIX path on windows', () => {
    expect(rejection(() => pathUriToNative('file:///home/x', 'windows')).message).toBe(
      "'file:///home/x' is invalid on 'windows'",
    );
  });
  it('refuses a UNC URI without a share on windows', () => {
    expect(rejection(() => pathUriToNative('file://server', 'windows')).message).toBe(
      "'file://server/' is invalid on 'windows'",
    );
  });
  it('refuses Windows-illegal characters smuggled by escapes', () => {
    expect(rejection(() => pathUriToNative('file:///C:/a%5Cb', 'windows')).message).toBe(
      "'file:///C:/a%5Cb' is invalid on 'windows'",
    );
    expect(rejection(() => pathUriToNative('file:///C:/a%3Astream', 'windows')).kind).toBe('invalid_params');
    expect(rejection(() => pathUriToNative('file:///C:/a%FF', 'windows')).kind).toBe('invalid_params');
  });
  it('refuses names Win32 would silently strip on windows', () => {
    expect(rejection(() => pathUriToNative('file:///C:/w/.git./HEAD', 'windows')).message).toBe(
      "'file:///C:/w/.git./HEAD' is invalid on 'windows'",
    );
    expect(rejection(() => pathUriToNative('file:///C:/w/.git%20', 'windows')).kind).toBe('invalid_params');
    expect(pathUriToNative('file:///w/.git.', 'linux')).toBe('/w/.git.');
  });
  it('converts Windows drive and UNC URIs', () => {
    expect(pathUriToNative('file:///C:/x/y', 'windows')).toBe('C:\\x\\y');
    expect(pathUriToNative('file:///c:', 'windows')).toBe('C:\\');
    expect(pathUriToNative('file://server/share/x', 'windows')).toBe('\\\\server\\share\\x');
    expect(pathUriToNative('file://server/share', 'windows')).toBe('\\\\server\\share');
  });
  it('keeps a backslash in a POSIX name (it is just a byte there)', () => {
    expect(pathUriToNative('file:///a%5Cb', 'linux')).toBe('/a\\b');
  });
});

describe('nativeToPathUri', () => {
  it('converts POSIX paths, encoding what needs it', () => {
    expect(nativeToPathUri('/home/u/a b#?%', 'linux')).toBe('file:///home/u/a%20b%23%3F%25');
    expect(nativeToPathUri('/', 'linux')).toBe('file:///');
  });
  it('keeps a root directory named like a drive distinct from a drive', () => {
    const uri = nativeToPathUri('/C:/x', 'linux');
    expect(uri).toBe('file:///C%3A/x');
    expect(pathUriToNative(uri, 'linux')).toBe('/C:/x');
  });
  it('converts Windows paths', () => {
    expect(nativeToPathUri('c:\\Users\\me', 'windows')).toBe('file:///C:/Users/me');
    expect(nativeToPathUri('C:\\', 'windows')).toBe('file:///C:/');
    expect(nativeToPathUri('\\\\Server\\share\\x', 'windows')).toBe('file://server/share/x');
  });
  it('refuses relative and device paths', () => {
    expect(rejection(() => nativeToPathUri('rel/x', 'linux')).kind).toBe('invalid_params');
    expect(rejection(() => nativeToPathUri('C:x', 'windows')).kind).toBe('invalid_params');
    expect(rejection(() => nativeToPathUri('\\\\?\\C:\\x', 'windows')).kind).toBe('invalid_params');
    expect(rejection(() => nativeToPathUri('/home/x', 'windows')).kind).toBe('invalid_params');
  });
  it('round-trips non-UTF-8 bytes on POSIX', () => {
    const native = pathUriToNative('file:///tmp/a%FF%C3b', 'linux');
    expect(native).toBe('/tmp/a\uDCFF\uDCC3b');
    expect(nativeToPathUri(native, 'linux')).toBe('file:///tmp/a%FF%C3b');
  });
  it('round-trips arbitrary byte names', () => {
    for (let byte = 1; byte < 256; byte++) {
      if (byte === 0x2f) continue;
      const hex = byte.toString(16).toUpperCase().padStart(2, '0');
      const uri = parsePathUri(`file:///d/x%${hex}y`);
      expect(nativeToPathUri(pathUriToNative(uri, 'linux'), 'linux')).toBe(uri);
    }
  });
});

describe('path length', () => {
  const pathOf = (bytes: number) => `/${'a/'.repeat((bytes - 2) / 2)}b`;

  it('takes a path up to the limit once decoded, however it was spelled, and refuses a longer one', () => {
    const longest = pathOf(LIMITS.pathMaxBytes - 2);
    expect(pathUriToNative(`file://${longest}`, 'linux')).toBe(longest);
    // Percent-encoded, the same path is three times as long as a URI and still taken.
    const encoded = `file://${longest.replace(/a/g, '%61')}`;
    expect(pathUriToNative(encoded, 'linux')).toBe(longest);
    expect(rejection(() => pathUriToNative(`file://${pathOf(LIMITS.pathMaxBytes + 2)}`, 'linux'))).toEqual({
      kind: 'invalid_params',
      message: expect.stringMatching(/^path is \d+ bytes long; at most 4096 bytes are allowed/),
    });
  });

  it('refuses a URI far longer than any path it could name before decoding it', () => {
    expect(rejection(() => parsePathUri(`file:///${'a/'.repeat(1_000_000)}`)).message).toMatch(
      /^path URI is 2000008 characters long; at most \d+ are allowed/,
    );
    // What `..` would shorten it to does not matter: it is never decoded.
    expect(rejection(() => parsePathUri(`file:///${'a/../'.repeat(10_000)}b`)).kind).toBe('invalid_params');
  });
});
