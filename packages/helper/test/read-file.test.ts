import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { EXECUTABLE_SURFACE, LIMITS, type PathGuard } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import { openRegularFile } from '../src/open-regular-file.js';
import { readOpenedFile } from '../src/ops/read-file.js';
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

describe('fs/readFile', () => {
  it('returns the exact bytes as a binary attachment, with dataBase64 left empty', async () => {
    const dir = tempDir();
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    writeFileSync(join(dir, 'a.bin'), bytes);
    const { response, data } = await ok('fs/readFile', { path: uri(join(dir, 'a.bin')) });
    expect(response).toEqual({ dataBase64: '' });
    expect(data?.equals(bytes)).toBe(true);
  });

  it('reads an empty file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'empty'), '');
    const { data } = await ok('fs/readFile', { path: uri(join(dir, 'empty')) });
    expect(data?.length).toBe(0);
  });

  it('reports a missing file as not_found naming the path', async () => {
    const dir = tempDir();
    const error = await fails('fs/readFile', { path: uri(join(dir, 'nope.txt')) });
    expectKind(error, 'not_found', -32004);
    expect(error.message).toBe(`No such file or directory: ${join(dir, 'nope.txt')}`);
  });

  it('refuses a directory with the reference wording', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    const error = await fails('fs/readFile', { path: uri(join(dir, 'sub')) });
    expectKind(error, 'is_directory', -32600);
    expect(error.message).toContain(`path \`${join(dir, 'sub')}\` is not a file`);
    expect(error.message).toContain('directory');
  });

  it('refuses a missing parent component that is a file as not_directory', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    const error = await fails('fs/readFile', { path: uri(join(dir, 'file', 'child')) });
    expectKind(error, 'not_directory', -32600);
  });

  it.skipIf(!isPosix)('refuses a FIFO without blocking, even with no writer (POSIX only)', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'pipe');
    mkfifo(fifo);
    const error = await fails('fs/readFile', { path: uri(fifo) });
    expectKind(error, 'not_regular_file', -32600);
    expect(error.message).toContain('named pipe');
  });

  it.skipIf(!isPosix)('refuses a character device such as /dev/zero (POSIX only)', async () => {
    const error = await fails('fs/readFile', { path: 'file:///dev/zero' });
    expectKind(error, 'not_regular_file', -32600);
    expect(error.message).toContain('character device');
  });

  it.skipIf(!isLinux)('refuses procfs files, which report size 0 but have content (Linux only)', async () => {
    const error = await fails('fs/readFile', { path: 'file:///proc/self/status' });
    expectKind(error, 'not_regular_file', -32600);
    expect(error.message).toContain('procfs');
  });

  it.skipIf(!isPosix)('refuses a unix socket (POSIX only)', async () => {
    const dir = tempDir();
    const socketPath = join(dir, 'sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const error = await fails('fs/readFile', { path: uri(socketPath) });
      expectKind(error, 'not_regular_file', -32600);
      expect(error.message).toContain('socket');
    } finally {
      server.close();
    }
  });

  it.skipIf(!isPosix)(
    'refuses a sparse 100 GiB file from its size, before reading (POSIX only)',
    async () => {
      const dir = tempDir();
      const big = join(dir, 'sparse');
      execFileSync('truncate', ['-s', '100G', big]);
      const started = Date.now();
      const error = await fails('fs/readFile', { path: uri(big) });
      expectKind(error, 'file_too_large', -32600);
      expect(error.message).toContain(big);
      expect(error.message).toContain('512 MiB');
      // Refused from fstat: nowhere near the time reading 100 GiB of zeros would take.
      expect(Date.now() - started).toBeLessThan(5_000);
    },
  );

  it.skipIf(!isPosix)('refuses a file one byte over the limit (POSIX only)', async () => {
    const dir = tempDir();
    const big = join(dir, 'over');
    execFileSync('truncate', ['-s', String(LIMITS.readFileMaxBytes + 1), big]);
    expectKind(await fails('fs/readFile', { path: uri(big) }), 'file_too_large', -32600);
  });

  it('refuses a file that grows past the limit while it is being read', async () => {
    const dir = tempDir();
    const path = join(dir, 'growing');
    writeFileSync(path, 'x'.repeat(100));
    const file = await openRegularFile(path);
    try {
      appendFileSync(path, 'y'.repeat(100));
      await expect(readOpenedFile(file, path, 150)).rejects.toMatchObject({
        kind: 'file_too_large',
        message: expect.stringContaining('grew past the limit'),
      });
    } finally {
      await file.handle.close();
    }
  });

  it('returns the grown content when a growing file stays within the limit', async () => {
    const dir = tempDir();
    const path = join(dir, 'growing');
    writeFileSync(path, 'x'.repeat(100));
    const file = await openRegularFile(path);
    try {
      appendFileSync(path, 'y'.repeat(10));
      const data = await readOpenedFile(file, path, 1000);
      expect(data.toString()).toBe(`${'x'.repeat(100)}${'y'.repeat(10)}`);
    } finally {
      await file.handle.close();
    }
  });

  it('returns all of a file that grew by more than the first read past its size takes', async () => {
    const dir = tempDir();
    const path = join(dir, 'growing');
    writeFileSync(path, 'x'.repeat(100));
    const file = await openRegularFile(path);
    const grown = Buffer.alloc(2.5 * 1024 * 1024 + 3, 'y');
    try {
      appendFileSync(path, grown);
      const data = await readOpenedFile(file, path, 4 * 1024 * 1024);
      expect(data.equals(Buffer.concat([Buffer.from('x'.repeat(100)), grown]))).toBe(true);
    } finally {
      await file.handle.close();
    }
  });

  it('follows a symlink to a regular file when not sandboxed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target'), 'through the link');
    symlinkAt('target', join(dir, 'link'));
    const { data } = await ok('fs/readFile', { path: uri(join(dir, 'link')) });
    expect(data?.toString()).toBe('through the link');
  });

  it('rejects a non-URI path and a missing path param as invalid_params', async () => {
    expectKind(await fails('fs/readFile', { path: '/etc/hostname' }), 'invalid_params', -32602);
    const missing = await fails('fs/readFile', {});
    expectKind(missing, 'invalid_params', -32602);
    expect(missing.message).toBe('missing field `path`');
  });
});

describe('reads are refused where the file physically is denied', () => {
  /** A sandbox whose writable root is `dir`, denying `dir/secret` and every `*.key` below `dir/keys`. */
  function denyingGuard(dir: string): PathGuard {
    const root = realpathSync(dir);
    return {
      entries: [
        { path: root, reason: 'writable_root', rule: 'writable root' },
        { path: join(root, 'secret'), reason: 'denied', rule: `denied by entry ${join(root, 'secret')}` },
      ],
      denyGlobs: [{ pattern: `${root}/keys/**/*.key` }],
      deniedIdentities: [],
      surface: { entries: [...EXECUTABLE_SURFACE], home: null },
    };
  }
  const sandboxed = (guard: PathGuard) => ({ sandboxed: true, guard });

  // The sandbox could not mask these (they did not exist when it was set up): only this check stands.
  it('refuses a denied file and a deny-glob match, however the request names them', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'secret'), 'denied content');
    mkdirSync(join(dir, 'keys', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'keys', 'deep', 'id.key'), 'private key');
    symlinkAt(join(dir, 'secret'), join(dir, 'alias'));
    symlinkAt(join(dir, 'keys'), join(dir, 'k'));
    const guard = denyingGuard(dir);
    for (const [path, rule] of [
      [join(dir, 'secret'), /denied by entry/],
      [join(dir, 'alias'), /\(it is .*secret\): denied by entry/],
      [join(dir, 'keys', 'deep', 'id.key'), /denied by glob/],
      [join(dir, 'k', 'deep', 'id.key'), /\(it is .*keys\/deep\/id\.key\): denied by glob/],
    ] as const) {
      for (const method of ['fs/readFile', 'fs/readTextFile']) {
        const error = await fails(method, { path: uri(path) }, sandboxed(guard));
        expectKind(error, 'permission_denied', -32600);
        expect(error.message, `${method} ${path}`).toMatch(rule);
      }
    }
  });

  it('still reads what the guard allows, through a symlink too', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'notes');
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'keys', 'id.pub'), 'public');
    symlinkAt(join(dir, 'notes.txt'), join(dir, 'link'));
    const guard = denyingGuard(dir);
    for (const [name, text] of [
      ['notes.txt', 'notes'],
      ['link', 'notes'],
      [join('keys', 'id.pub'), 'public'],
    ] as const) {
      const { data } = await ok('fs/readFile', { path: uri(join(dir, name)) }, sandboxed(guard));
      expect(data?.toString(), name).toBe(text);
    }
  });
});
