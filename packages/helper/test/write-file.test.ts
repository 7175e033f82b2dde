import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileOperation } from '../src/ops/write-file.js';
import { runRequest } from '../src/run-request.js';
import {
  expectKind,
  fails,
  isPosix,
  mkfifo,
  ok,
  RESTRICTED_SANDBOX,
  symlinkAt,
  tempDir,
  tempLeftovers,
  uri,
  writableGuard,
} from './support/helper-run.js';

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('fs/writeFile', () => {
  it('creates a new file with the exact bytes', async () => {
    const dir = tempDir();
    const path = join(dir, 'new.txt');
    await ok('fs/writeFile', { path: uri(path), dataBase64: b64('hello') });
    expect(readFileSync(path, 'utf8')).toBe('hello');
    expect(tempLeftovers(dir)).toEqual([]);
  });

  describe.skipIf(!isPosix)('mode of a new file (POSIX only)', () => {
    /** Runs `body` with the process umask set to `mask`, then restores it. */
    async function withUmask<T>(mask: number, body: () => Promise<T>): Promise<T> {
      const previous = process.umask(mask);
      try {
        return await body();
      } finally {
        process.umask(previous);
      }
    }

    it.each([
      [0o022, 0o644],
      [0o077, 0o600],
      [0o002, 0o664],
      [0o000, 0o666],
    ])('is 0666 under the umask (umask %o gives %o)', async (mask, expected) => {
      const dir = tempDir();
      const path = join(dir, 'new.txt');
      await withUmask(mask, () => ok('fs/writeFile', { path: uri(path), dataBase64: b64('x') }));
      expect(statSync(path).mode & 0o7777).toBe(expected);
    });

    it("is the umask's in create mode too", async () => {
      const dir = tempDir();
      const path = join(dir, 'new.txt');
      await withUmask(0o022, () =>
        ok('fs/writeFile', { path: uri(path), dataBase64: b64('x'), mode: 'create' }),
      );
      expect(statSync(path).mode & 0o7777).toBe(0o644);
    });

    it('a replaced file keeps its own mode whatever the umask', async () => {
      const dir = tempDir();
      const path = join(dir, 'f');
      writeFileSync(path, 'old');
      chmodSync(path, 0o640);
      await withUmask(0o077, () => ok('fs/writeFile', { path: uri(path), dataBase64: b64('new') }));
      expect(statSync(path).mode & 0o7777).toBe(0o640);
    });

    it.each([
      ['0600', 0o600],
      ['600', 0o600],
      ['0755', 0o755],
      ['0777', 0o777],
      ['0000', 0o000],
    ])('permissions %s is the exact mode of a new file, umask or not', async (permissions, expected) => {
      const dir = tempDir();
      const path = join(dir, 'new');
      await withUmask(0o077, () =>
        ok('fs/writeFile', { path: uri(path), dataBase64: b64('x'), permissions }),
      );
      expect(statSync(path).mode & 0o7777).toBe(expected);
      expect(tempLeftovers(dir)).toEqual([]);
    });

    it('permissions also sets the mode of the file it replaces', async () => {
      const dir = tempDir();
      const path = join(dir, 'f');
      writeFileSync(path, 'old');
      chmodSync(path, 0o644);
      await ok('fs/writeFile', { path: uri(path), dataBase64: b64('secret'), permissions: '0600' });
      expect(readFileSync(path, 'utf8')).toBe('secret');
      expect(statSync(path).mode & 0o7777).toBe(0o600);
    });

    it('permissions null is the default', async () => {
      const dir = tempDir();
      const path = join(dir, 'new');
      await withUmask(0o022, () =>
        ok('fs/writeFile', { path: uri(path), dataBase64: b64('x'), permissions: null }),
      );
      expect(statSync(path).mode & 0o7777).toBe(0o644);
    });
  });

  it.each(['04755', '1777', '0o644', '0888', '64', '00644', ' 644', '', '-644', 420, true])(
    'refuses permissions %j with invalid_params before touching the disk',
    async (permissions) => {
      const dir = tempDir();
      const path = join(dir, 'f');
      const error = await fails('fs/writeFile', { path: uri(path), dataBase64: b64('x'), permissions });
      expectKind(error, 'invalid_params', -32602);
      // A wrong type gets the serde-style "invalid type" text, which names no field.
      if (typeof permissions === 'string') expect(error.message).toContain('permissions');
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it("the helper's own parse refuses what the schema refuses", () => {
    const base = { path: join(tempDir(), 'f'), dataBase64: Buffer.from('x'), mode: 'overwrite' };
    const os = process.platform === 'win32' ? 'windows' : process.platform === 'darwin' ? 'macos' : 'linux';
    expect(writeFileOperation.parse({ ...base, permissions: '0640' }, os).permissions).toBe('0640');
    expect(writeFileOperation.parse(base, os).permissions).toBeUndefined();
    for (const permissions of ['4755', '0o644', 420]) {
      expect(() => writeFileOperation.parse({ ...base, permissions }, os)).toThrow(
        expect.objectContaining({ kind: 'invalid_params' }),
      );
    }
  });

  it('refuses bad permissions without touching an existing file', async () => {
    const dir = tempDir();
    const path = join(dir, 'f');
    writeFileSync(path, 'old');
    if (isPosix) chmodSync(path, 0o644);
    const error = await fails('fs/writeFile', {
      path: uri(path),
      dataBase64: b64('new'),
      permissions: '4755',
    });
    expectKind(error, 'invalid_params', -32602);
    expect(readFileSync(path, 'utf8')).toBe('old');
    if (isPosix) expect(statSync(path).mode & 0o7777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(['f']);
  });

  it.skipIf(!isPosix)('keeps the mode of the file it replaces (POSIX only)', async () => {
    const dir = tempDir();
    const path = join(dir, 'script.sh');
    writeFileSync(path, 'old');
    chmodSync(path, 0o755);
    await ok('fs/writeFile', { path: uri(path), dataBase64: b64('new') });
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(statSync(path).mode & 0o7777).toBe(0o755);
  });

  it.skipIf(!isPosix)('does not carry setuid over to new content (POSIX only)', async () => {
    const dir = tempDir();
    const path = join(dir, 'tool');
    writeFileSync(path, 'old');
    chmodSync(path, 0o4755);
    await ok('fs/writeFile', { path: uri(path), dataBase64: b64('new') });
    expect(statSync(path).mode & 0o7777).toBe(0o755);
  });

  it('accepts raw bytes from the binary framing instead of base64', async () => {
    const dir = tempDir();
    const path = join(dir, 'raw.bin');
    const bytes = Buffer.from([0xff, 0x00, 0x80, 0x0a]);
    const reply = await runRequest({
      operation: 'fs/writeFile',
      params: { path, dataBase64: '', mode: 'overwrite' },
      binary: { field: 'dataBase64', data: bytes },
    });
    expect(reply.status).toBe('ok');
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('rejects bad base64 before touching anything', async () => {
    const dir = tempDir();
    const path = join(dir, 'bad.txt');
    const error = await fails('fs/writeFile', { path: uri(path), dataBase64: '%%%not-base64' });
    expectKind(error, 'invalid_request', -32600);
    expect(error.message).toBe('fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('rejects non-canonical base64 that Node would silently accept', async () => {
    const dir = tempDir();
    const error = await fails('fs/writeFile', { path: uri(join(dir, 'x')), dataBase64: 'aGVsbG8' });
    expectKind(error, 'invalid_request', -32600);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('requires dataBase64', async () => {
    const dir = tempDir();
    const error = await fails('fs/writeFile', { path: uri(join(dir, 'x')) });
    expectKind(error, 'invalid_params', -32602);
    expect(error.message).toBe('missing field `dataBase64`');
  });

  it('reports a missing parent as not_found and does not create it', async () => {
    const dir = tempDir();
    const path = join(dir, 'missing', 'f.txt');
    const error = await fails('fs/writeFile', { path: uri(path), dataBase64: b64('x') });
    expectKind(error, 'not_found', -32004);
    expect(error.message).toContain(path);
    expect(error.message).toContain('parent directory');
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('replaces only the written name of a hard-linked file', async () => {
    const dir = tempDir();
    const path = join(dir, 'a');
    writeFileSync(path, 'shared');
    linkSync(path, join(dir, 'b'));
    await ok('fs/writeFile', { path: uri(path), dataBase64: b64('mine') });
    expect(readFileSync(path, 'utf8')).toBe('mine');
    expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('shared');
  });

  it('refuses to write over a directory', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    const error = await fails('fs/writeFile', { path: uri(join(dir, 'sub')), dataBase64: b64('x') });
    expectKind(error, 'is_directory', -32600);
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it.skipIf(!isPosix)('refuses to replace a FIFO, without blocking on it (POSIX only)', async () => {
    const dir = tempDir();
    mkfifo(join(dir, 'pipe'));
    const error = await fails('fs/writeFile', { path: uri(join(dir, 'pipe')), dataBase64: b64('x') });
    expectKind(error, 'not_regular_file', -32600);
    expect(lstatSync(join(dir, 'pipe')).isFIFO()).toBe(true);
  });

  describe('symlink leaf', () => {
    it('is refused (symlink_escape) when the context is sandboxed, and the target is untouched', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'target'), 'keep');
      symlinkAt('target', join(dir, 'link'));
      const error = await fails(
        'fs/writeFile',
        {
          path: uri(join(dir, 'link')),
          dataBase64: b64('evil'),
          sandbox: RESTRICTED_SANDBOX,
        },
        { guard: writableGuard(dir) },
      );
      expectKind(error, 'symlink_escape', -32600);
      expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('keep');
      expect(lstatSync(join(dir, 'link')).isSymbolicLink()).toBe(true);
      expect(tempLeftovers(dir)).toEqual([]);
    });

    it('is refused when the caller says the run is sandboxed', async () => {
      const dir = tempDir();
      symlinkAt('elsewhere', join(dir, 'link'));
      const error = await fails(
        'fs/writeFile',
        { path: uri(join(dir, 'link')), dataBase64: b64('x') },
        { sandboxed: true, guard: writableGuard(dir) },
      );
      expectKind(error, 'symlink_escape', -32600);
      expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    });

    it('is written through to its target when not sandboxed, and stays a link', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'real'));
      writeFileSync(join(dir, 'real', 'target'), 'old');
      symlinkAt('real/target', join(dir, 'link'));
      await ok('fs/writeFile', { path: uri(join(dir, 'link')), dataBase64: b64('new') });
      expect(readFileSync(join(dir, 'real', 'target'), 'utf8')).toBe('new');
      expect(readlinkSync(join(dir, 'link'))).toBe('real/target');
    });

    it('creates the target of a dangling link when not sandboxed', async () => {
      const dir = tempDir();
      symlinkAt('created-through-link', join(dir, 'link'));
      await ok('fs/writeFile', { path: uri(join(dir, 'link')), dataBase64: b64('made') });
      expect(readFileSync(join(dir, 'created-through-link'), 'utf8')).toBe('made');
    });
  });

  describe('mode "create"', () => {
    it('creates a missing file', async () => {
      const dir = tempDir();
      await ok('fs/writeFile', { path: uri(join(dir, 'c')), dataBase64: b64('x'), mode: 'create' });
      expect(readFileSync(join(dir, 'c'), 'utf8')).toBe('x');
      expect(tempLeftovers(dir)).toEqual([]);
    });

    it('refuses an existing file and leaves it unchanged', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'c'), 'original');
      const error = await fails('fs/writeFile', {
        path: uri(join(dir, 'c')),
        dataBase64: b64('x'),
        mode: 'create',
      });
      expectKind(error, 'file_already_exists', -32600);
      expect(readFileSync(join(dir, 'c'), 'utf8')).toBe('original');
    });

    it('counts a dangling symlink as existing (never creates through it)', async () => {
      const dir = tempDir();
      symlinkAt('nowhere', join(dir, 'link'));
      const error = await fails('fs/writeFile', {
        path: uri(join(dir, 'link')),
        dataBase64: b64('x'),
        mode: 'create',
      });
      expectKind(error, 'file_already_exists', -32600);
      expect(existsSync(join(dir, 'nowhere'))).toBe(false);
    });

    it('lets exactly one of many concurrent creators win, with its complete content', async () => {
      const dir = tempDir();
      const path = join(dir, 'race');
      const contents = Array.from({ length: 24 }, (_, i) => `writer-${i}-${'z'.repeat(1000 * i)}`);
      const replies = await Promise.all(
        contents.map((text) =>
          runRequest({
            operation: 'fs/writeFile',
            params: { path, dataBase64: Buffer.from(text), mode: 'create' },
          }),
        ),
      );
      const winners = replies.filter((reply) => reply.status === 'ok');
      expect(winners).toHaveLength(1);
      for (const reply of replies) {
        if (reply.status === 'error') expect(reply.payload.data.errorKind).toBe('file_already_exists');
      }
      const winner = contents[replies.findIndex((reply) => reply.status === 'ok')];
      expect(readFileSync(path, 'utf8')).toBe(winner);
      expect(tempLeftovers(dir)).toEqual([]);
    });

    it('rejects an unknown mode', async () => {
      const dir = tempDir();
      const error = await fails('fs/writeFile', {
        path: uri(join(dir, 'c')),
        dataBase64: b64('x'),
        mode: 'append',
      });
      expectKind(error, 'invalid_params', -32602);
      expect(readdirSync(dir)).toEqual([]);
    });
  });

  describe('expectedSha256', () => {
    it('replaces the file when the current content matches', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'f'), 'v1');
      await ok('fs/writeFile', {
        path: uri(join(dir, 'f')),
        dataBase64: b64('v2'),
        expectedSha256: sha256('v1').toUpperCase(),
      });
      expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('v2');
    });

    it('refuses with hash_mismatch when the content differs, leaving it unchanged', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'f'), 'changed by someone else');
      const error = await fails('fs/writeFile', {
        path: uri(join(dir, 'f')),
        dataBase64: b64('v2'),
        expectedSha256: sha256('v1'),
      });
      expectKind(error, 'hash_mismatch', -32600);
      expect(error.message).toContain(sha256('changed by someone else'));
      expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('changed by someone else');
      expect(tempLeftovers(dir)).toEqual([]);
    });

    it('refuses with hash_mismatch when the file no longer exists', async () => {
      const dir = tempDir();
      const error = await fails('fs/writeFile', {
        path: uri(join(dir, 'gone')),
        dataBase64: b64('v2'),
        expectedSha256: sha256('v1'),
      });
      expectKind(error, 'hash_mismatch', -32600);
      expect(existsSync(join(dir, 'gone'))).toBe(false);
    });

    it('refuses an in-place edit of the same inode made after the hash was taken', async () => {
      const dir = tempDir();
      const target = join(dir, 'f');
      writeFileSync(target, 'v1');
      const inode = statSync(target).ino;
      // Large enough that filling and flushing the temporary file leaves time to edit the target.
      const data = Buffer.alloc(64 * 1024 * 1024, 'n');
      const pending = runRequest({
        operation: 'fs/writeFile',
        params: { path: target, dataBase64: data, mode: 'overwrite', expectedSha256: sha256('v1') },
      });
      // The temporary file appears once the hash matched; then someone edits the target in place.
      let edited = false;
      while (!edited) {
        await new Promise((resolve) => setImmediate(resolve));
        if (readdirSync(dir).some((name) => name.startsWith('.fs-sandbox-'))) {
          appendFileSync(target, ' edited');
          edited = true;
        }
      }
      const reply = await pending;
      expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('hash_mismatch');
      expect(readFileSync(target, 'utf8')).toBe('v1 edited');
      expect(statSync(target).ino).toBe(inode);
      expect(tempLeftovers(dir)).toEqual([]);
    });

    it('rejects a value that is not 64 hex digits', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'f'), 'v1');
      const error = await fails('fs/writeFile', {
        path: uri(join(dir, 'f')),
        dataBase64: b64('v2'),
        expectedSha256: 'abc',
      });
      expectKind(error, 'invalid_params', -32602);
      expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('v1');
    });
  });
});
