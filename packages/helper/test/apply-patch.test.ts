import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  expectKind,
  fails,
  isLinux,
  isRoot,
  ok,
  tempDir,
  tempLeftovers,
  uri,
  writableGuard,
} from './support/helper-run.js';

function patchOf(...lines: string[]): string {
  return ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
}

async function apply(dir: string, patch: string, extra: Record<string, unknown> = {}, guard?: string) {
  const options = guard === undefined ? {} : { guard: writableGuard(guard) };
  return (await ok('fs/applyPatch', { patch, cwd: uri(dir), ...extra }, options)).response;
}

function applyFails(dir: string, patch: string, extra: Record<string, unknown> = {}, guard?: string) {
  const options = guard === undefined ? {} : { guard: writableGuard(guard) };
  return fails('fs/applyPatch', { patch, cwd: uri(dir), ...extra }, options);
}

/** Every name below `dir` with its content ('<dir>' for a directory, '-> x' for a link). */
function treeOf(dir: string, prefix = ''): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const stats = lstatSync(path);
    if (stats.isSymbolicLink())
      tree[prefix + name] = `-> ${execFileSync('readlink', [path]).toString().trim()}`;
    else if (stats.isDirectory()) {
      tree[prefix + name] = '<dir>';
      Object.assign(tree, treeOf(path, `${prefix}${name}/`));
    } else tree[prefix + name] = readFileSync(path, 'latin1');
  }
  return tree;
}

/** Adds new/dir/a.txt, updates b.txt, deletes d.txt. */
const MIXED_LINES = [
  '*** Add File: new/dir/a.txt',
  '+alpha',
  '*** Update File: b.txt',
  '@@',
  '-b',
  '+B',
  '*** Delete File: d.txt',
];
const MIXED = patchOf(...MIXED_LINES);

function mixedTree(): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'b.txt'), 'b\n');
  writeFileSync(join(dir, 'd.txt'), 'd\n');
  return dir;
}

describe('fs/applyPatch exact', () => {
  it('is false after deleting a symlink (the delta cannot bring the link back); the target is untouched', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target.txt'), 'kept\n');
    symlinkSync('target.txt', join(dir, 'link.txt'));
    const result = await apply(dir, patchOf('*** Delete File: link.txt'));
    expect(result).toMatchObject({ status: 'applied', exact: false, changes: [{ kind: 'delete' }] });
    expect(treeOf(dir)).toEqual({ 'target.txt': 'kept\n' });
  });

  it('is false after overwriting a destination that could not be read first (not UTF-8)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bin.dat'), Buffer.from([0xff, 0xfe, 0x00, 0x80]));
    const result = await apply(dir, patchOf('*** Add File: bin.dat', '+text'));
    expect(result).toMatchObject({ status: 'applied', exact: false });
    expect(readFileSync(join(dir, 'bin.dat'), 'utf8')).toBe('text\n');
  });

  it('stays true for plain adds, updates and deletes of regular files', async () => {
    const dir = mixedTree();
    expect(await apply(dir, MIXED)).toMatchObject({ status: 'applied', exact: true });
  });

  it('a move whose source cannot be removed: the delta records the destination as added, exact while the source is as it was', async () => {
    const root = tempDir();
    const work = join(root, 'work');
    const outside = join(root, 'outside');
    mkdirSync(work);
    mkdirSync(outside);
    writeFileSync(join(outside, 'src.txt'), 'one\n');
    // The guard lets the helper write below `work` only: the source, outside it, cannot be removed.
    const error = await applyFails(
      root,
      patchOf('*** Update File: outside/src.txt', '*** Move to: work/dst.txt', '@@', '-one', '+two'),
      {},
      work,
    );
    expectKind(error, 'permission_denied', -32600);
    expect(error.data.delta).toEqual({
      changes: [{ path: join(work, 'dst.txt'), kind: 'add' }],
      exact: true,
    });
    expect(readFileSync(join(work, 'dst.txt'), 'utf8')).toBe('two\n');
    expect(readFileSync(join(outside, 'src.txt'), 'utf8')).toBe('one\n');
  });
});

describe('fs/applyPatch files', () => {
  it('keeps a CRLF file CRLF, and its BOM', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'crlf.txt'), '\uFEFFone\r\ntwo\r\nthree\r\n');
    await apply(dir, patchOf('*** Update File: crlf.txt', '@@', '-two', '+TWO', '+2b', ' three'));
    expect(readFileSync(join(dir, 'crlf.txt'), 'utf8')).toBe('\uFEFFone\r\nTWO\r\n2b\r\nthree\r\n');
  });

  it.skipIf(!isLinux)(
    'gives new files the umask, and an updated file keeps its mode (Linux only: POSIX modes and its umask)',
    async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'keep.sh'), 'a\n', { mode: 0o751 });
      const previous = process.umask(0o027);
      try {
        await apply(
          dir,
          patchOf('*** Add File: fresh.txt', '+x', '*** Update File: keep.sh', '@@', '-a', '+b'),
        );
      } finally {
        process.umask(previous);
      }
      expect(statSync(join(dir, 'fresh.txt')).mode & 0o777).toBe(0o640);
      expect(statSync(join(dir, 'keep.sh')).mode & 0o777).toBe(0o751);
    },
  );

  for (const atomic of [false, true]) {
    it(`dryRun${atomic ? ' with atomic' : ''} computes the changes and writes nothing`, async () => {
      const dir = mixedTree();
      const before = treeOf(dir);
      const result = await apply(dir, MIXED, { dryRun: true, atomic });
      expect(result).toMatchObject({
        status: 'dry_run',
        changes: [
          { path: join(dir, 'new/dir/a.txt'), kind: 'add' },
          { path: join(dir, 'b.txt'), kind: 'update' },
          { path: join(dir, 'd.txt'), kind: 'delete' },
        ],
      });
      expect(treeOf(dir)).toEqual(before);
    });
  }
});

describe('fs/applyPatch bounds', () => {
  it('refuses to update a file larger than the text methods read (file_too_large), writing nothing', async () => {
    const dir = tempDir();
    const big = `${'x'.repeat(LIMITS.textMaxBytes)}\n`;
    writeFileSync(join(dir, 'big.txt'), big);
    const error = await applyFails(
      dir,
      patchOf('*** Add File: a.txt', '+a', '*** Update File: big.txt', '@@', '+more'),
      {
        atomic: true,
      },
    );
    expectKind(error, 'file_too_large', -32600);
    expect(readdirSync(dir)).toEqual(['big.txt']);
  });
});

describe('fs/applyPatch atomic', () => {
  it('commits every file, leaving no hidden name behind', async () => {
    const dir = mixedTree();
    expect(await apply(dir, MIXED, { atomic: true })).toMatchObject({ status: 'applied', exact: true });
    expect(treeOf(dir)).toEqual({
      'b.txt': 'B\n',
      new: '<dir>',
      'new/dir': '<dir>',
      'new/dir/a.txt': 'alpha\n',
    });
  });

  it('a path refused while staging changes nothing (made directories and staging files removed); without atomic the earlier files stay', async () => {
    const root = tempDir();
    const work = join(root, 'work');
    mkdirSync(work);
    writeFileSync(join(work, 'b.txt'), 'b\n');
    const patch = patchOf(
      '*** Add File: work/new/a.txt',
      '+alpha',
      '*** Update File: work/b.txt',
      '@@',
      '-b',
      '+B',
      '*** Add File: outside.txt',
      '+no',
    );
    const before = treeOf(root);
    const refused = await applyFails(root, patch, { atomic: true }, work);
    expectKind(refused, 'permission_denied', -32600);
    expect(refused.data.delta).toBeUndefined();
    expect(treeOf(root)).toEqual(before);

    const partial = await applyFails(root, patch, {}, work);
    expect(partial.data.delta).toEqual({
      changes: [
        { path: join(work, 'new/a.txt'), kind: 'add' },
        { path: join(work, 'b.txt'), kind: 'update' },
      ],
      exact: true,
    });
  });

  describe.skipIf(!isLinux || !isRoot)('a rename that fails mid-commit (chattr +i, Linux as root)', () => {
    let immutable: string | null = null;
    afterEach(() => {
      if (immutable !== null) execFileSync('chattr', ['-i', immutable]);
      immutable = null;
    });

    it('puts back every file already renamed in — the very inodes and a deleted link itself, by rename — and says nothing is committed', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'b.txt'), 'b\n');
      writeFileSync(join(dir, 'd.txt'), 'd\n');
      writeFileSync(join(dir, 'm.txt'), 'm\n');
      writeFileSync(join(dir, 'z.txt'), 'z\n');
      symlinkSync('b.txt', join(dir, 'link'));
      const inodes = ['b.txt', 'd.txt', 'm.txt'].map((name) => statSync(join(dir, name)).ino);
      immutable = join(dir, 'z.txt');
      execFileSync('chattr', ['+i', immutable]);
      const before = treeOf(dir);
      const error = await applyFails(
        dir,
        patchOf(
          ...MIXED_LINES,
          '*** Delete File: link',
          '*** Update File: m.txt',
          '*** Move to: moved/m.txt',
          '@@',
          '-m',
          '+M',
          '*** Update File: z.txt',
          '@@',
          '-z',
          '+Z',
        ),
        { atomic: true },
      );
      expectKind(error, 'permission_denied', -32600);
      expect(error.data.delta).toBeUndefined();
      expect(treeOf(dir)).toEqual(before);
      expect(['b.txt', 'd.txt', 'm.txt'].map((name) => statSync(join(dir, name)).ino)).toEqual(inodes);
      expect(tempLeftovers(dir)).toEqual([]);
      expect(existsSync(join(dir, 'new'))).toBe(false);
    });
  });
});
