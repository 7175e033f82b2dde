import { chmodSync, mkdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectKind, fails, isPosix, mkfifo, ok, symlinkAt, tempDir, uri } from './support/helper-run.js';

describe('fs/getMetadata', () => {
  it('describes a regular file with its size and times in whole milliseconds', async () => {
    const dir = tempDir();
    const path = join(dir, 'f');
    writeFileSync(path, '12345');
    utimesSync(path, new Date(1_700_000_000_123), new Date(1_700_000_000_456));
    const { response } = await ok('fs/getMetadata', { path: uri(path) });
    expect(response).toMatchObject({
      isDirectory: false,
      isFile: true,
      isSymlink: false,
      size: 5,
      modifiedAtMs: 1_700_000_000_456,
    });
    expect(Number.isInteger(response.createdAtMs)).toBe(true);
    expect(response.createdAtMs).toBe(Math.trunc(statSync(path).birthtimeMs));
    expect(response.accessedAtMs).toBe(Math.trunc(statSync(path).atimeMs));
    expect(response.hardLinks).toBe(1);
  });

  it.skipIf(!isPosix)(
    'reports the permission bits as four octal digits, of the target through a link (POSIX only)',
    async () => {
      const dir = tempDir();
      const path = join(dir, 'f');
      writeFileSync(path, 'x');
      chmodSync(path, 0o4751);
      symlinkSync('f', join(dir, 'link'));
      expect((await ok('fs/getMetadata', { path: uri(path) })).response.permissions).toBe('4751');
      expect((await ok('fs/getMetadata', { path: uri(join(dir, 'link')) })).response.permissions).toBe(
        '4751',
      );
    },
  );

  it('describes a directory', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'd'));
    const { response } = await ok('fs/getMetadata', { path: uri(join(dir, 'd')) });
    expect(response).toMatchObject({ isDirectory: true, isFile: false, isSymlink: false });
  });

  it('follows a symlink for type and size, and says the name is a link', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target'), 'twelve bytes');
    symlinkAt('target', join(dir, 'link'));
    const { response } = await ok('fs/getMetadata', { path: uri(join(dir, 'link')) });
    expect(response).toMatchObject({ isDirectory: false, isFile: true, isSymlink: true, size: 12 });
  });

  it('reports a dangling symlink as not_found, saying it is a link', async () => {
    const dir = tempDir();
    symlinkAt('missing', join(dir, 'link'));
    const error = await fails('fs/getMetadata', { path: uri(join(dir, 'link')) });
    expectKind(error, 'not_found', -32004);
    expect(error.message).toContain('symbolic link');
  });

  it('reports a missing path as not_found', async () => {
    const dir = tempDir();
    expectKind(await fails('fs/getMetadata', { path: uri(join(dir, 'nope')) }), 'not_found', -32004);
  });

  it.skipIf(!isPosix)(
    'describes a FIFO as neither file nor directory, without opening it (POSIX only)',
    async () => {
      const dir = tempDir();
      mkfifo(join(dir, 'pipe'));
      const { response } = await ok('fs/getMetadata', { path: uri(join(dir, 'pipe')) });
      expect(response).toMatchObject({ isDirectory: false, isFile: false, isSymlink: false });
    },
  );
});
