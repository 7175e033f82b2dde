import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import {
  expectKind,
  fails,
  isLinux,
  isPosix,
  mkfifo,
  ok,
  symlinkAt,
  tempDir,
  uri,
} from './support/helper-run.js';

const WIDE = { maxDepth: 64, maxDirectories: 10_000, maxEntries: 50_000 };

interface WalkResponse {
  entries: { path: string; kind: string }[];
  errors: { path: string; message: string }[];
  truncated: boolean;
}

async function walk(root: string, options: Record<string, unknown> = {}): Promise<WalkResponse> {
  const { response } = await ok('fs/walk', { path: uri(root), options: { ...WIDE, ...options } });
  return response as unknown as WalkResponse;
}

function relative(root: string, result: WalkResponse): string[] {
  return result.entries.map((entry) => `${entry.kind[0]}:${entry.path.slice(uri(root).length + 1)}`);
}

describe('fs/walk', () => {
  it('walks breadth-first with names sorted in each directory, not including the root', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'b', 'inner'), { recursive: true });
    mkdirSync(join(dir, 'a'));
    writeFileSync(join(dir, 'c.txt'), '');
    writeFileSync(join(dir, 'a', 'z.txt'), '');
    writeFileSync(join(dir, 'b', 'inner', 'deep.txt'), '');
    const result = await walk(dir);
    expect(relative(dir, result)).toEqual([
      'd:a',
      'd:b',
      'f:c.txt',
      'f:a/z.txt',
      'd:b/inner',
      'f:b/inner/deep.txt',
    ]);
    expect(result.errors).toEqual([]);
    expect(result.truncated).toBe(false);
  });

  it('sorts by bytes, as the reference does (upper case before lower case)', async () => {
    const dir = tempDir();
    for (const name of ['b', 'B', 'a', '_']) writeFileSync(join(dir, name), '');
    expect(relative(dir, await walk(dir))).toEqual(['f:B', 'f:_', 'f:a', 'f:b']);
  });

  it('lists only the root level with maxDepth 0', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    expect(relative(dir, await walk(dir, { maxDepth: 0 }))).toEqual(['d:a']);
  });

  it('stops at maxEntries and says it was truncated', async () => {
    const dir = tempDir();
    for (const name of ['1', '2', '3', '4']) writeFileSync(join(dir, name), '');
    const result = await walk(dir, { maxEntries: 2 });
    expect(relative(dir, result)).toEqual(['f:1', 'f:2']);
    expect(result.truncated).toBe(true);
  });

  it('enters at most maxDirectories directories (the root counts) and says it was truncated', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'a', 'a2'), { recursive: true });
    mkdirSync(join(dir, 'b', 'b2'), { recursive: true });
    const result = await walk(dir, { maxDirectories: 2 });
    expect(relative(dir, result)).toEqual(['d:a', 'd:b', 'd:a/a2']);
    expect(result.truncated).toBe(true);
  });

  it('leaves links out unless following directory symlinks (as the reference), and then never loops', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'f'), '');
    symlinkAt('real', join(dir, 'link-dir'));
    symlinkAt('real/f', join(dir, 'link-file'));
    symlinkAt('..', join(dir, 'real', 'up'));
    expect(relative(dir, await walk(dir))).toEqual(['d:real', 'f:real/f']);
    const followed = await walk(dir, { followDirectorySymlinks: true });
    // link-dir is the same directory as real (entered once); real/up is the root itself; a link to
    // a file is never followed, so it is left out.
    expect(relative(dir, followed)).toEqual(['d:link-dir', 'd:real', 'f:link-dir/f', 'd:link-dir/up']);
    expect(followed.truncated).toBe(false);
  });

  it('lists the links it does not follow as links with includeSymlinks', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'f'), '');
    symlinkAt('real', join(dir, 'link-dir'));
    symlinkAt('real/f', join(dir, 'link-file'));
    symlinkAt('..', join(dir, 'real', 'up'));
    expect(relative(dir, await walk(dir, { includeSymlinks: true }))).toEqual([
      's:link-dir',
      's:link-file',
      'd:real',
      'f:real/f',
      's:real/up',
    ]);
    expect(relative(dir, await walk(dir, { includeSymlinks: true, followDirectorySymlinks: true }))).toEqual([
      'd:link-dir',
      's:link-file',
      'd:real',
      'f:link-dir/f',
      'd:link-dir/up',
    ]);
  });

  it.skipIf(!isPosix)('leaves out FIFOs and other special files (POSIX only)', async () => {
    const dir = tempDir();
    mkfifo(join(dir, 'pipe'));
    writeFileSync(join(dir, 'f'), '');
    expect(relative(dir, await walk(dir))).toEqual(['f:f']);
  });

  it('prunes hidden directories when asked, still listing them', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.git', 'objects'), { recursive: true });
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'x'), '');
    expect(relative(dir, await walk(dir, { pruneHiddenDirectories: true }))).toEqual([
      'd:.git',
      'd:src',
      'f:src/x',
    ]);
  });

  it('takes a link that leads nowhere (a loop, a dangling link) as a link, not as a failure', async () => {
    const dir = tempDir();
    symlinkAt('loop', join(dir, 'loop'));
    symlinkAt('missing', join(dir, 'dangling'));
    writeFileSync(join(dir, 'z'), '');
    for (const followDirectorySymlinks of [false, true]) {
      const result = await walk(dir, { followDirectorySymlinks });
      expect(relative(dir, result)).toEqual(['f:z']);
      expect(result.errors).toEqual([]);
      const listed = await walk(dir, { followDirectorySymlinks, includeSymlinks: true });
      expect(relative(dir, listed)).toEqual(['s:dangling', 's:loop', 'f:z']);
      expect(listed.errors).toEqual([]);
    }
  });

  it('returns nothing for a file root and fails for a missing root', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), '');
    const result = await walk(join(dir, 'f'));
    expect(result).toEqual({ entries: [], errors: [], truncated: false });
    expectKind(await fails('fs/walk', { path: uri(join(dir, 'nope')), options: WIDE }), 'not_found', -32004);
  });

  it('returns nothing for a symlinked root unless following', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'f'), '');
    symlinkAt('real', join(dir, 'link'));
    expect((await walk(join(dir, 'link'))).entries).toEqual([]);
    expect((await walk(join(dir, 'link'), { followDirectorySymlinks: true })).entries).toHaveLength(1);
  });

  it('checks its limits before looking at the root', async () => {
    const missing = `${uri(tempDir())}/nope`;
    const zero = await fails('fs/walk', { path: missing, options: { ...WIDE, maxEntries: 0 } });
    expectKind(zero, 'invalid_request', -32600);
    expect(zero.message).toBe('filesystem walk limits must be greater than zero');
    for (const over of [{ maxDepth: 65 }, { maxDirectories: 10_001 }, { maxEntries: 50_001 }]) {
      const error = await fails('fs/walk', { path: missing, options: { ...WIDE, ...over } });
      expectKind(error, 'invalid_request', -32600);
      expect(error.message).toBe(
        'filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000',
      );
    }
    // Options left out are the limits, so these reach the (missing) root.
    expectKind(await fails('fs/walk', { path: missing }), 'not_found', -32004);
    expectKind(await fails('fs/walk', { path: missing, options: { maxDepth: 1 } }), 'not_found', -32004);
    expectKind(
      await fails('fs/walk', { path: missing, options: { maxDepth: -1 } }),
      'invalid_params',
      -32602,
    );
  });

  it.skipIf(!isLinux)('percent-encodes bytes that are not UTF-8 in entry URIs (Linux only)', async () => {
    const dir = tempDir();
    mkdirSync(Buffer.concat([Buffer.from(`${dir}/d`), Buffer.from([0xff])]));
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/d`), Buffer.from([0xff]), Buffer.from('/x%y')]), '');
    expect(relative(dir, await walk(dir))).toEqual(['d:d%FF', 'f:d%FF/x%25y']);
  });

  it(`stops before the response passes ${LIMITS.walkMaxResponseBytes} bytes`, async () => {
    const dir = tempDir();
    const long = 'n'.repeat(200);
    // Names of one file: a link is one system call (20 000 writes timed out under load).
    const name = (i: number) => join(dir, `${long}${String(i).padStart(5, '0')}`);
    writeFileSync(name(0), '');
    for (let i = 1; i < 20_000; i++) linkSync(name(0), name(i));
    const result = await walk(dir);
    expect(result.truncated).toBe(true);
    expect(result.entries.length).toBeLessThan(20_000);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(LIMITS.walkMaxResponseBytes);
  });
});
