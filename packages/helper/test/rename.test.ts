import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { PathGuard } from '@fs-sandbox/policy/core';
import { EXECUTABLE_SURFACE } from '@fs-sandbox/policy/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  expectKind,
  fails,
  isLinux,
  mkfifo,
  ok,
  symlinkAt,
  tempDir,
  uri,
  writableGuard,
} from './support/helper-run.js';

/** The guard of a sandbox whose one writable root is `root`, with more entries (denied, protected) inside it. */
function guardWith(root: string, more: PathGuard['entries']): PathGuard {
  const guard = writableGuard(root);
  return { ...guard, entries: [...guard.entries, ...more] };
}

const sandboxed = (guard: PathGuard) => ({ sandboxed: true, guard });

// /dev/shm is a tmpfs on Linux hosts: a second file system for the EXDEV path when /tmp is not one too.
const shm = isLinux && existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(tempDirRoot()).dev;
const shmDirs: string[] = [];
afterEach(() => {
  for (const dir of shmDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDirRoot(): string {
  return realpathSync(process.env.TMPDIR ?? '/tmp');
}

describe('fs/rename', () => {
  it('moves a file, keeping its content, and refuses an existing destination without overwrite', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a'), 'A');
    writeFileSync(join(dir, 'b'), 'B');
    const error = await fails('fs/rename', {
      sourcePath: uri(join(dir, 'a')),
      destinationPath: uri(join(dir, 'b')),
    });
    expectKind(error, 'already_exists', -32600);
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('A');
    expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('B');
    const moved = await ok('fs/rename', {
      sourcePath: uri(join(dir, 'a')),
      destinationPath: uri(join(dir, 'b')),
      overwrite: true,
    });
    expect(moved.response).toEqual({});
    expect(existsSync(join(dir, 'a'))).toBe(false);
    expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('A');
  });

  it('moves a directory tree whole', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 't', 'x'), { recursive: true });
    writeFileSync(join(dir, 't', 'x', 'f'), 'F');
    await ok(
      'fs/rename',
      { sourcePath: uri(join(dir, 't')), destinationPath: uri(join(dir, 'u')) },
      sandboxed(writableGuard(dir)),
    );
    expect(existsSync(join(dir, 't'))).toBe(false);
    expect(readFileSync(join(dir, 'u', 'x', 'f'), 'utf8')).toBe('F');
  });

  it('moves a symlink itself, never its target', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'target'));
    writeFileSync(join(dir, 'target', 'f'), 'T');
    symlinkAt('target', join(dir, 'link'));
    await ok(
      'fs/rename',
      { sourcePath: uri(join(dir, 'link')), destinationPath: uri(join(dir, 'moved')) },
      sandboxed(writableGuard(dir)),
    );
    expect(lstatSync(join(dir, 'moved')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'moved'))).toBe('target');
    expect(readFileSync(join(dir, 'target', 'f'), 'utf8')).toBe('T');
    expect(existsSync(join(dir, 'link'))).toBe(false);
  });

  it('refuses a rename onto itself and a move of a directory into its own subtree', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 't', 'sub'), { recursive: true });
    expectKind(
      await fails('fs/rename', { sourcePath: uri(join(dir, 't')), destinationPath: uri(join(dir, 't')) }),
      'invalid_request',
      -32600,
    );
    const into = await fails('fs/rename', {
      sourcePath: uri(join(dir, 't')),
      destinationPath: uri(join(dir, 't', 'sub', 'x')),
    });
    expectKind(into, 'invalid_request', -32600);
    expect(into.message).toContain('into itself');
    // Spelled through a symlink to the tree, the destination is still inside it.
    symlinkAt('t', join(dir, 'alias'));
    expectKind(
      await fails('fs/rename', {
        sourcePath: uri(join(dir, 't')),
        destinationPath: uri(join(dir, 'alias', 'x')),
      }),
      'invalid_request',
      -32600,
    );
    expect(existsSync(join(dir, 't', 'sub'))).toBe(true);
  });

  it('answers not_found for a missing source, and is_directory / not_directory for a kind mismatch', async () => {
    const dir = tempDir();
    expectKind(
      await fails('fs/rename', { sourcePath: uri(join(dir, 'no')), destinationPath: uri(join(dir, 'b')) }),
      'not_found',
      -32004,
    );
    writeFileSync(join(dir, 'f'), 'F');
    mkdirSync(join(dir, 'full'));
    writeFileSync(join(dir, 'full', 'x'), 'X');
    mkdirSync(join(dir, 'src'));
    const fileOntoDir = {
      sourcePath: uri(join(dir, 'f')),
      destinationPath: uri(join(dir, 'full')),
      overwrite: true,
    };
    expectKind(await fails('fs/rename', fileOntoDir), 'is_directory', -32600);
    const dirOntoFull = {
      sourcePath: uri(join(dir, 'src')),
      destinationPath: uri(join(dir, 'full')),
      overwrite: true,
    };
    expectKind(await fails('fs/rename', dirOntoFull), 'is_directory', -32600);
    const dirOntoFile = {
      sourcePath: uri(join(dir, 'src')),
      destinationPath: uri(join(dir, 'f')),
      overwrite: true,
    };
    expectKind(await fails('fs/rename', dirOntoFile), 'not_directory', -32600);
    expect(readFileSync(join(dir, 'full', 'x'), 'utf8')).toBe('X');
    expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('F');
  });

  it('never renames the writable root itself', async () => {
    const parent = tempDir();
    const root = join(parent, 'root');
    mkdirSync(root);
    const error = await fails(
      'fs/rename',
      { sourcePath: uri(root), destinationPath: uri(join(root, '..', 'other')) },
      sandboxed(
        guardWith(parent, [{ path: realpathSync(root), reason: 'writable_root', rule: 'writable root' }]),
      ),
    );
    expectKind(error, 'permission_denied', -32600);
    expect(existsSync(root)).toBe(true);
  });

  it('refuses to move a tree that holds a denied path, and moves nothing', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'd'));
    writeFileSync(join(dir, 'd', 'secret'), 'S');
    writeFileSync(join(dir, 'd', 'ok'), 'O');
    const guard = guardWith(dir, [
      { path: join(realpathSync(dir), 'd', 'secret'), reason: 'denied', rule: 'denied by entry secret' },
    ]);
    const error = await fails(
      'fs/rename',
      { sourcePath: uri(join(dir, 'd')), destinationPath: uri(join(dir, 'e')) },
      sandboxed(guard),
    );
    expectKind(error, 'permission_denied', -32600);
    expect(readFileSync(join(dir, 'd', 'secret'), 'utf8')).toBe('S');
    expect(existsSync(join(dir, 'e'))).toBe(false);
  });

  it('refuses a protected name as source or destination, and a tree that would land on a denied path', async () => {
    const dir = tempDir();
    const real = realpathSync(dir);
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'config'), 'C');
    mkdirSync(join(dir, 'd'));
    writeFileSync(join(dir, 'd', 'secret'), 'mine');
    const guard = guardWith(dir, [
      { path: join(real, '.git'), reason: 'protected', rule: 'protected metadata path .git' },
      { path: join(real, 'x', 'secret'), reason: 'denied', rule: 'denied by entry x/secret' },
    ]);
    const out = await fails(
      'fs/rename',
      { sourcePath: uri(join(dir, '.git')), destinationPath: uri(join(dir, 'g')) },
      sandboxed(guard),
    );
    expectKind(out, 'protected_path', -32600);
    const inner = await fails(
      'fs/rename',
      { sourcePath: uri(join(dir, '.git', 'config')), destinationPath: uri(join(dir, 'c')) },
      sandboxed(guard),
    );
    expectKind(inner, 'protected_path', -32600);
    writeFileSync(join(dir, 'hook'), 'H');
    const onto = await fails(
      'fs/rename',
      { sourcePath: uri(join(dir, 'hook')), destinationPath: uri(join(dir, '.git', 'hook')) },
      sandboxed(guard),
    );
    expectKind(onto, 'protected_path', -32600);
    // d/secret would become x/secret, which the policy denies.
    const landing = await fails(
      'fs/rename',
      { sourcePath: uri(join(dir, 'd')), destinationPath: uri(join(dir, 'x')) },
      sandboxed(guard),
    );
    expectKind(landing, 'permission_denied', -32600);
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).toBe('C');
    expect(readFileSync(join(dir, 'd', 'secret'), 'utf8')).toBe('mine');
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });

  it('judges a protected source spelled through a symlinked parent by where it really is', async () => {
    const dir = tempDir();
    const real = realpathSync(dir);
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'HEAD'), 'ref');
    symlinkAt('.', join(dir, 'loop'));
    const guard = guardWith(dir, [
      { path: join(real, '.git'), reason: 'protected', rule: 'protected metadata path .git' },
    ]);
    const error = await fails(
      'fs/rename',
      { sourcePath: uri(join(dir, 'loop', '.git')), destinationPath: uri(join(dir, 'stolen')) },
      sandboxed(guard),
    );
    expectKind(error, 'protected_path', -32600);
    expect(readFileSync(join(dir, '.git', 'HEAD'), 'utf8')).toBe('ref');
    expect(existsSync(join(dir, 'stolen'))).toBe(false);
  });

  it.runIf(shm)(
    'copies then removes across two file systems, and says so (skipped where /dev/shm is not a second file system)',
    async () => {
      const dir = tempDir();
      const other = mkdtempSync('/dev/shm/fs-rename-');
      shmDirs.push(other);
      mkdirSync(join(other, 't', 'x'), { recursive: true });
      writeFileSync(join(other, 't', 'x', 'f'), 'F');
      symlinkAt('x/f', join(other, 't', 'link'));
      const guard: PathGuard = {
        entries: [...writableGuard(dir).entries, ...writableGuard(other).entries],
        denyGlobs: [],
        deniedIdentities: [],
        surface: { entries: [...EXECUTABLE_SURFACE], home: null },
      };
      const moved = await ok(
        'fs/rename',
        { sourcePath: uri(join(other, 't')), destinationPath: uri(join(dir, 't')) },
        sandboxed(guard),
      );
      expect(moved.response).toEqual({ copiedAcrossDevices: true });
      expect(existsSync(join(other, 't'))).toBe(false);
      expect(readFileSync(join(dir, 't', 'x', 'f'), 'utf8')).toBe('F');
      expect(readlinkSync(join(dir, 't', 'link'))).toBe('x/f');
    },
  );

  it.runIf(shm)(
    'refuses to move a tree holding a FIFO across file systems (a copy cannot carry it), moving nothing',
    async () => {
      const dir = tempDir();
      const other = mkdtempSync('/dev/shm/fs-rename-');
      shmDirs.push(other);
      mkdirSync(join(other, 't'));
      mkfifo(join(other, 't', 'pipe'));
      const error = await fails('fs/rename', {
        sourcePath: uri(join(other, 't')),
        destinationPath: uri(join(dir, 't')),
      });
      expectKind(error, 'not_regular_file', -32600);
      expect(existsSync(join(other, 't', 'pipe'))).toBe(true);
      expect(existsSync(join(dir, 't'))).toBe(false);
    },
  );
});
