import { describe, expect, it } from 'vitest';
import {
  depthFirst,
  formatSize,
  globMatcher,
  sizedDirectoryLines,
  treeExcluder,
  treeJson,
  withoutExcluded,
} from '../src/mcp/listing-format.js';

const entry = (path: string, isDirectory = false) => ({ segments: path.split('/'), isDirectory });

describe('the reference listing formats', () => {
  it('formats sizes in binary units', () => {
    expect([0, 1023, 1024, 1536, 5 * 1024 ** 3, 3 * 1024 ** 5].map(formatSize)).toEqual([
      '0 B',
      '1023 B',
      '1.00 KB',
      '1.50 KB',
      '5.00 GB',
      '3072.00 TB',
    ]);
  });

  it('pads sized lines and ends with the totals', () => {
    const text = sizedDirectoryLines(
      [
        { name: 'b.txt', isDirectory: false, size: 10 },
        { name: 'a', isDirectory: true, size: 4096 },
        { name: 'c.bin', isDirectory: false, size: 2048 },
      ],
      'size',
    );
    expect(text.split('\n')).toEqual([
      '[DIR] a                              ',
      `[FILE] c.bin                          ${'2.00 KB'.padStart(10)}`,
      `[FILE] b.txt                          ${'10 B'.padStart(10)}`,
      '',
      'Total: 2 files, 1 directories',
      'Combined size: 2.01 KB',
    ]);
  });

  it('orders a breadth-first walk depth first, each directory by name', () => {
    const walk = [entry('b', true), entry('a.txt'), entry('b/z'), entry('b/c', true), entry('b/c/d')];
    expect(depthFirst(walk).map((e) => e.segments.join('/'))).toEqual(['a.txt', 'b', 'b/c', 'b/c/d', 'b/z']);
  });

  it('drops an excluded directory with everything below it', () => {
    const walk = [
      entry('node_modules', true),
      entry('node_modules/x.js'),
      entry('src', true),
      entry('src/x.js'),
    ];
    const kept = withoutExcluded(walk, treeExcluder(['node_modules'], 'linux'));
    expect(kept.map((e) => e.segments.join('/'))).toEqual(['src', 'src/x.js']);
    expect(treeJson(kept)).toBe(
      JSON.stringify(
        [{ name: 'src', type: 'directory', children: [{ name: 'x.js', type: 'file' }] }],
        null,
        2,
      ),
    );
  });

  it("excludes a name at any depth, a '*' pattern as a glob, and dot files like any other", () => {
    const excluded = treeExcluder(['dist', '*.log'], 'linux');
    expect(['dist', 'a/dist', 'a/dist/b', 'x.log', '.hidden.log'].map(excluded)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['a/x.log', 'distant'].map(excluded)).toEqual([false, false]);
  });

  it('matches search globs against the relative path', () => {
    const matches = globMatcher(['**/*.ts'], 'linux');
    expect(['a.ts', 'src/b.ts', '.x/c.ts', 'a.tsx'].map(matches)).toEqual([true, true, true, false]);
    expect(globMatcher(['*.md'], 'linux')('docs/a.md')).toBe(false);
    expect(globMatcher([], 'linux')('anything')).toBe(false);
  });

  it('matches a backtracking regex killer in bounded time, and refuses a pattern it cannot match with its kind', () => {
    const started = Date.now();
    const long = `${'a'.repeat(200)}/`.repeat(3) + 'a'.repeat(200);
    expect(globMatcher(['**/*a*a*a*a*a*a*a*a*a*a*a*a*b'], 'linux')(long)).toBe(false);
    expect(globMatcher(['**/*a*a*a*a*a*a*a*a*a*a*a*a*b'], 'linux')(`${long}b`)).toBe(true);
    // Not a timing target: a backtracking matcher takes minutes here.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(() => globMatcher(['./src/*.ts'], 'linux')).toThrow(
      expect.objectContaining({
        kind: 'invalid_params',
        message: expect.stringMatching(/^the glob `\.\/src/),
      }),
    );
  });
});
