import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectKind, fails, isLinux, isPosix, mkfifo, ok, tempDir, uri } from './support/helper-run.js';

describe('fs/openForRead', () => {
  it('reports size and identity (dev/ino as exact decimal strings)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), '0123456789');
    const { response } = await ok('fs/openForRead', { path: uri(join(dir, 'f')) });
    const stats = statSync(join(dir, 'f'), { bigint: true });
    expect(response).toEqual({ size: 10, dev: stats.dev.toString(), ino: stats.ino.toString() });
  });

  it('applies the readFile checks: directories, FIFOs and procfs are refused', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'd'));
    expectKind(await fails('fs/openForRead', { path: uri(join(dir, 'd')) }), 'is_directory', -32600);
    if (isPosix) {
      mkfifo(join(dir, 'pipe'));
      expectKind(await fails('fs/openForRead', { path: uri(join(dir, 'pipe')) }), 'not_regular_file', -32600);
    }
    if (isLinux)
      expectKind(
        await fails('fs/openForRead', { path: 'file:///proc/self/status' }),
        'not_regular_file',
        -32600,
      );
  });

  it.skipIf(!isPosix)('has no size limit (block reads exist for large files) (POSIX only)', async () => {
    const dir = tempDir();
    execFileSync('truncate', ['-s', '100G', join(dir, 'big')]);
    const { response } = await ok('fs/openForRead', { path: uri(join(dir, 'big')) });
    expect(response.size).toBe(100 * 1024 ** 3);
  });
});

describe('fs/readRange', () => {
  function read(path: string, offset: number, len: number, extra: Record<string, unknown> = {}) {
    return ok('fs/readRange', { path: uri(path), offset, len, ...extra });
  }

  it('reads positionally; eof only on a short read, as in the reference', async () => {
    const dir = tempDir();
    const path = join(dir, 'digits');
    writeFileSync(path, '0123456789');
    let result = await read(path, 6, 3);
    expect(result.data?.toString()).toBe('678');
    expect(result.response).toEqual({ chunk: '', eof: false });
    result = await read(path, 7, 3);
    expect(result.data?.toString()).toBe('789');
    expect(result.response.eof).toBe(false);
    result = await read(path, 8, 4);
    expect(result.data?.toString()).toBe('89');
    expect(result.response.eof).toBe(true);
    result = await read(path, 10, 4);
    expect(result.data?.length).toBe(0);
    expect(result.response.eof).toBe(true);
    result = await read(path, 1_000_000, 1);
    expect(result.response.eof).toBe(true);
  });

  it('checks the identity it was given', async () => {
    const dir = tempDir();
    const path = join(dir, 'f');
    writeFileSync(path, 'original');
    const { response: identity } = await ok('fs/openForRead', { path: uri(path) });
    const same = await read(path, 0, 4, { identity: { dev: identity.dev, ino: identity.ino } });
    expect(same.data?.toString()).toBe('orig');
    writeFileSync(join(dir, 'other'), 'replacement');
    renameSync(join(dir, 'other'), path);
    const error = await fails('fs/readRange', {
      path: uri(path),
      offset: 0,
      len: 4,
      identity: { dev: identity.dev, ino: identity.ino },
    });
    expectKind(error, 'not_found', -32004);
    expect(error.message).toBe(`file changed since it was opened: ${path}`);
  });

  it('bounds len to 1..1048576 with the reference message', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    for (const len of [0, 1_048_577, 1_099_511_627_776]) {
      const error = await fails('fs/readRange', { path: uri(join(dir, 'f')), offset: 0, len });
      expectKind(error, 'invalid_request', -32600);
      expect(error.message).toBe('file read block length must be between 1 and 1048576');
    }
    const max = await read(join(dir, 'f'), 0, 1_048_576);
    expect(max.data?.toString()).toBe('x');
  });

  it('rejects negative or fractional numbers and a malformed identity as invalid_params', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    const path = uri(join(dir, 'f'));
    expectKind(await fails('fs/readRange', { path, offset: 0, len: -1 }), 'invalid_params', -32602);
    expectKind(await fails('fs/readRange', { path, offset: 1.5, len: 1 }), 'invalid_params', -32602);
    expectKind(
      await fails('fs/readRange', { path, offset: 0, len: 1, identity: { dev: 1, ino: 2 } }),
      'invalid_params',
      -32602,
    );
  });
});
