import { chmodSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectKind,
  fails,
  isPosix,
  ok,
  tempDir,
  tempLeftovers,
  uri,
  writableGuard,
} from './support/helper-run.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** fs/stageWrite, fs/writeRange, fs/publishStaged and fs/discardStaged: one write handle's helper runs. */
async function stage(path: string, options = {}) {
  const { response } = await ok('fs/stageWrite', { path: uri(path) }, options);
  return response.staged as { name: string; dev: string; ino: string };
}

describe('write handle operations', () => {
  it('stage, write blocks, publish: the target changes only at publish and keeps its mode', async () => {
    const dir = tempDir();
    const target = join(dir, 'f.txt');
    writeFileSync(target, 'old');
    chmodSync(target, 0o640);
    const staged = await stage(target);
    expect(staged.name).toMatch(/^\.fs-sandbox-[0-9a-z-]+\.tmp$/);
    expect(statSync(join(dir, staged.name)).mode & 0o777).toBe(0o600);
    await ok('fs/writeRange', { path: uri(target), staged, offset: 3, chunk: b64('def') });
    await ok('fs/writeRange', { path: uri(target), staged, offset: 0, chunk: b64('abc') });
    expect(readFileSync(target, 'utf8')).toBe('old');
    await ok('fs/publishStaged', { path: uri(target), staged });
    expect(readFileSync(target, 'utf8')).toBe('abcdef');
    expect(statSync(target).mode & 0o777).toBe(0o640);
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it('discard removes the staging file and leaves the target alone', async () => {
    const dir = tempDir();
    const target = join(dir, 'f.txt');
    writeFileSync(target, 'old');
    const staged = await stage(target);
    await ok('fs/writeRange', { path: uri(target), staged, offset: 0, chunk: b64('new') });
    await ok('fs/discardStaged', { path: uri(target), staged });
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it('refuses a staging name that is not one, or a file that is not the one staged', async () => {
    const dir = tempDir();
    const target = join(dir, 'f.txt');
    const staged = await stage(target);
    for (const name of ['../f.txt', 'f.txt', '.fs-sandbox-x/../../etc.tmp']) {
      expectKind(
        await fails('fs/publishStaged', { path: uri(target), staged: { ...staged, name } }),
        'invalid_params',
        -32602,
      );
    }
    // Same name, another file: the identity decides.
    renameSync(join(dir, staged.name), join(dir, 'moved'));
    writeFileSync(join(dir, staged.name), 'planted');
    const swapped = await fails('fs/writeRange', { path: uri(target), staged, offset: 0, chunk: b64('x') });
    expectKind(swapped, 'not_found', -32004);
    expect(readFileSync(join(dir, staged.name), 'utf8')).toBe('planted');
    expectKind(await fails('fs/publishStaged', { path: uri(target), staged }), 'not_found', -32004);
    expect(() => statSync(target)).toThrow(/ENOENT/);
  });

  it.skipIf(!isPosix)('never follows a link planted at the staging name (POSIX only)', async () => {
    const dir = tempDir();
    const outside = join(tempDir(), 'outside.txt');
    writeFileSync(outside, 'outside');
    const target = join(dir, 'f.txt');
    const staged = await stage(target);
    renameSync(join(dir, staged.name), join(dir, 'moved'));
    symlinkSync(outside, join(dir, staged.name));
    expectKind(
      await fails('fs/writeRange', { path: uri(target), staged, offset: 0, chunk: b64('x') }),
      'not_found',
      -32004,
    );
    expect(readFileSync(outside, 'utf8')).toBe('outside');
  });

  it('checks the guard on the target at every step', async () => {
    const root = tempDir();
    const other = tempDir();
    const sandboxed = { sandboxed: true, guard: writableGuard(root) };
    const refused = await fails('fs/stageWrite', { path: uri(join(other, 'f.txt')) }, sandboxed);
    expectKind(refused, 'permission_denied', -32600);
    expect(tempLeftovers(other)).toEqual([]);
    // Staged where it was allowed, then published under a guard that no longer allows it.
    const target = join(other, 'g.txt');
    const staged = await stage(target);
    expectKind(
      await fails('fs/publishStaged', { path: uri(target), staged }, sandboxed),
      'permission_denied',
      -32600,
    );
    expect(() => statSync(target)).toThrow(/ENOENT/);
  });

  it('bounds a block like the server does', async () => {
    const dir = tempDir();
    const target = join(dir, 'f.txt');
    const staged = await stage(target);
    const far = await fails('fs/writeRange', {
      path: uri(target),
      staged,
      offset: 16 * 1024 ** 3,
      chunk: b64('x'),
    });
    expectKind(far, 'file_too_large', -32600);
  });
});
