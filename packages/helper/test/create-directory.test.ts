import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectKind, fails, ok, symlinkAt, tempDir, uri } from './support/helper-run.js';

describe('fs/createDirectory', () => {
  it('creates missing parents by default (recursive defaults to true)', async () => {
    const dir = tempDir();
    await ok('fs/createDirectory', { path: uri(join(dir, 'a', 'b', 'c')) });
    expect(statSync(join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
  });

  it('treats recursive: null as the default', async () => {
    const dir = tempDir();
    await ok('fs/createDirectory', { path: uri(join(dir, 'x', 'y')), recursive: null });
    expect(statSync(join(dir, 'x', 'y')).isDirectory()).toBe(true);
  });

  it('accepts an existing directory, recursive or not', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'here'));
    await ok('fs/createDirectory', { path: uri(join(dir, 'here')), recursive: false });
    await ok('fs/createDirectory', { path: uri(join(dir, 'here')), recursive: true });
  });

  it('accepts an existing symlink to a directory', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    symlinkAt('real', join(dir, 'alias'));
    await ok('fs/createDirectory', { path: uri(join(dir, 'alias')), recursive: false });
  });

  it('without recursive, reports a missing parent as not_found and creates nothing', async () => {
    const dir = tempDir();
    const error = await fails('fs/createDirectory', { path: uri(join(dir, 'p', 'child')), recursive: false });
    expectKind(error, 'not_found', -32004);
    expect(error.message).toContain(join(dir, 'p'));
    expect(existsSync(join(dir, 'p'))).toBe(false);
  });

  it('refuses when a file is at the name', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    for (const recursive of [true, false]) {
      const error = await fails('fs/createDirectory', { path: uri(join(dir, 'file')), recursive });
      expectKind(error, 'already_exists', -32600);
      expect(error.message).toContain(join(dir, 'file'));
    }
  });

  it('names the ancestor that is a file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    const error = await fails('fs/createDirectory', { path: uri(join(dir, 'file', 'a', 'b')) });
    expectKind(error, 'not_directory', -32600);
    expect(error.message).toContain(`Not a directory: ${join(dir, 'file')}`);
  });

  it('rejects a non-boolean recursive', async () => {
    const dir = tempDir();
    const error = await fails('fs/createDirectory', { path: uri(join(dir, 'a')), recursive: 'yes' });
    expectKind(error, 'invalid_params', -32602);
    expect(existsSync(join(dir, 'a'))).toBe(false);
  });
});
