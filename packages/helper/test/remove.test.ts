import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDirLinkToggler } from '../../../test/support/dir-link-toggler.js';
import {
  call,
  expectKind,
  fails,
  inspectDeepTree,
  isLinux,
  makeDeepTree,
  ok,
  RESTRICTED_SANDBOX,
  symlinkAt,
  tempDir,
  uri,
  writableGuard,
} from './support/helper-run.js';

describe('fs/remove', () => {
  it('never follows a directory swapped for a link to ../keep while a tree is removed (300 rounds)', async () => {
    const dir = tempDir();
    const keep = join(dir, 'keep');
    mkdirSync(keep);
    const kept = Array.from({ length: 20 }, (_, i) => `k${i}`);
    for (const name of kept) writeFileSync(join(keep, name), name);
    const target = join(dir, 't');
    // Another process flips t/sub between a directory full of files and a link, by atomic renames.
    const toggler = startDirLinkToggler(target);
    try {
      for (let round = 0; round < 300; round++) {
        mkdirSync(target, { recursive: true });
        await call('fs/remove', { path: uri(target), recursive: true });
        expect(readdirSync(keep).sort(), `round ${round}`).toEqual([...kept].sort());
      }
    } finally {
      toggler.kill('SIGKILL');
    }
  }, 60_000);

  it('removes a file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    await ok('fs/remove', { path: uri(join(dir, 'f')) });
    expect(existsSync(join(dir, 'f'))).toBe(false);
  });

  it('removes a directory tree by default (recursive defaults to true)', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 't', 'a', 'b'), { recursive: true });
    writeFileSync(join(dir, 't', 'a', 'b', 'f'), 'x');
    writeFileSync(join(dir, 't', 'g'), 'y');
    await ok('fs/remove', { path: uri(join(dir, 't')) });
    expect(existsSync(join(dir, 't'))).toBe(false);
  });

  it('refuses a non-empty directory without recursive and leaves it whole', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 't'));
    writeFileSync(join(dir, 't', 'f'), 'x');
    const error = await fails('fs/remove', { path: uri(join(dir, 't')), recursive: false });
    expectKind(error, 'is_directory', -32600);
    expect(error.message).toContain('Directory not empty');
    expect(error.message).toContain('recursive: true');
    expect(readFileSync(join(dir, 't', 'f'), 'utf8')).toBe('x');
  });

  it('removes an empty directory without recursive, as the reference does', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'empty'));
    await ok('fs/remove', { path: uri(join(dir, 'empty')), recursive: false });
    expect(existsSync(join(dir, 'empty'))).toBe(false);
  });

  it('treats a missing path as success by default (force defaults to true)', async () => {
    const dir = tempDir();
    await ok('fs/remove', { path: uri(join(dir, 'ghost')) });
    await ok('fs/remove', { path: uri(join(dir, 'ghost')), force: null });
  });

  it('reports a missing path as not_found with force: false', async () => {
    const dir = tempDir();
    const error = await fails('fs/remove', { path: uri(join(dir, 'ghost')), force: false });
    expectKind(error, 'not_found', -32004);
    expect(error.message).toBe(`No such file or directory: ${join(dir, 'ghost')}`);
  });

  it('inside the sandbox, refuses to call a path behind a dangling symlink removed (its target may be hidden)', async () => {
    const dir = tempDir();
    symlinkAt(join(dir, 'not-mounted-here'), join(dir, 'link'));
    const error = await fails(
      'fs/remove',
      { path: uri(join(dir, 'link', 'file')), sandbox: RESTRICTED_SANDBOX },
      { sandboxed: true, guard: writableGuard(dir) },
    );
    expectKind(error, 'symlink_escape', -32600);
    expect(error.message).toContain(join(dir, 'link'));
    // Without a sandbox the host view is the whole truth: missing is missing.
    await ok('fs/remove', { path: uri(join(dir, 'link', 'file')) });
    expect(lstatSync(join(dir, 'link')).isSymbolicLink()).toBe(true);
  });

  describe('never follows symlinks', () => {
    it('removes a link to a directory, written with a trailing slash, and not the directory', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'target'));
      writeFileSync(join(dir, 'target', 'precious'), 'keep');
      symlinkAt('target', join(dir, 'link'));
      await ok('fs/remove', { path: `${uri(join(dir, 'link'))}/` });
      expect(existsSync(join(dir, 'link'))).toBe(false);
      expect(readFileSync(join(dir, 'target', 'precious'), 'utf8')).toBe('keep');
    });

    it('removes links inside a tree without touching what they point to', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'outside'));
      writeFileSync(join(dir, 'outside', 'precious'), 'keep');
      mkdirSync(join(dir, 'tree'));
      symlinkAt(join(dir, 'outside'), join(dir, 'tree', 'dir-link'));
      symlinkAt(join(dir, 'outside', 'precious'), join(dir, 'tree', 'file-link'));
      await ok('fs/remove', { path: uri(join(dir, 'tree')) });
      expect(existsSync(join(dir, 'tree'))).toBe(false);
      expect(readFileSync(join(dir, 'outside', 'precious'), 'utf8')).toBe('keep');
    });

    it('removes a dangling link', async () => {
      const dir = tempDir();
      symlinkAt('nowhere', join(dir, 'link'));
      await ok('fs/remove', { path: uri(join(dir, 'link')), force: false });
      expect(() => lstatSync(join(dir, 'link'))).toThrow();
    });
  });

  it.skipIf(!isLinux)('removes names that are not UTF-8 (Linux only)', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 't'));
    const odd = Buffer.concat([Buffer.from(`${dir}/t/`), Buffer.from([0xff, 0x80])]);
    mkdirSync(odd);
    writeFileSync(Buffer.concat([odd, Buffer.from('/'), Buffer.from([0xc3])]), 'x');
    await ok('fs/remove', { path: uri(join(dir, 't')) });
    expect(existsSync(join(dir, 't'))).toBe(false);
  });

  it.skipIf(!isLinux)(
    'removes a 5 000-level tree (far past PATH_MAX) without overflowing the stack (Linux only)',
    async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'deep'));
      makeDeepTree(join(dir, 'deep'), 5000, 'bottom');
      expect(inspectDeepTree(join(dir, 'deep'))).toEqual({ depth: 5000, leaf: 'bottom' });
      await ok('fs/remove', { path: uri(join(dir, 'deep')) });
      expect(existsSync(join(dir, 'deep'))).toBe(false);
    },
    // Making, walking and removing 5 000 levels took 35 s on a loaded 2-core machine: a hang bound.
    120_000,
  );
});
