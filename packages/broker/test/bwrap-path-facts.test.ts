import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectPathFacts, expandDenyGlobs } from '../src/backends/linux/path-facts.js';

let root: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-facts-')));
  await mkdir(join(root, 'w', 'real', 'deep'), { recursive: true });
  await writeFile(join(root, 'w', 'real', 'file.txt'), 'x');
  await symlink('real', join(root, 'w', 'link'));
  await symlink('../../real/file.txt', join(root, 'w', 'real', 'deep', 'up'));
  await symlink(join(root, 'w', 'real'), join(root, 'abs-link'));
  await symlink('loop-b', join(root, 'loop-a'));
  await symlink('loop-a', join(root, 'loop-b'));
  await symlink('nowhere', join(root, 'w', 'dangling'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('collectPathFacts', () => {
  it('reports kinds, link texts and every symlink crossed while resolving', async () => {
    const w = join(root, 'w');
    const facts = await collectPathFacts(
      [
        join(w, 'real'),
        join(w, 'real', 'file.txt'),
        join(w, 'link'),
        join(w, 'link', 'file.txt'),
        join(w, 'real', 'deep', 'up'),
        join(root, 'abs-link', 'deep'),
        join(w, 'missing'),
        join(w, 'dangling'),
        join(root, 'loop-a'),
      ],
      [w],
    );
    const fact = (path: string) => facts.paths.get(path);
    expect(fact(join(w, 'real'))).toEqual({ kind: 'directory', linkText: null, symlinksCrossed: [] });
    expect(fact(join(w, 'real', 'file.txt'))).toEqual({ kind: 'file', linkText: null, symlinksCrossed: [] });
    expect(fact(join(w, 'link'))).toEqual({
      kind: 'directory',
      linkText: 'real',
      symlinksCrossed: [join(w, 'link')],
      real: join(w, 'real'),
    });
    expect(fact(join(w, 'link', 'file.txt'))).toEqual({
      kind: 'file',
      linkText: null,
      symlinksCrossed: [join(w, 'link')],
      real: join(w, 'real', 'file.txt'),
    });
    // `..` in a relative target climbs from the link's own directory.
    expect(fact(join(w, 'real', 'deep', 'up'))).toEqual({
      kind: 'file',
      linkText: '../../real/file.txt',
      symlinksCrossed: [join(w, 'real', 'deep', 'up')],
      real: join(w, 'real', 'file.txt'),
    });
    expect(fact(join(root, 'abs-link', 'deep'))).toEqual({
      kind: 'directory',
      linkText: null,
      symlinksCrossed: [join(root, 'abs-link')],
      real: join(w, 'real', 'deep'),
    });
    expect(fact(join(w, 'missing'))?.kind).toBe('missing');
    expect(fact(join(w, 'dangling'))).toEqual({
      kind: 'missing',
      linkText: 'nowhere',
      symlinksCrossed: [join(w, 'dangling')],
    });
    expect(fact(join(root, 'loop-a'))?.kind).toBe('missing');
    expect(facts.writableRootRealPaths).toEqual([w]);
  });

  it('gives writable roots by their real path and leaves out the missing ones', async () => {
    const facts = await collectPathFacts([], [join(root, 'abs-link'), join(root, 'nope')]);
    expect(facts.writableRootRealPaths).toEqual([join(root, 'w', 'real')]);
  });
});

describe('expandDenyGlobs', () => {
  it('finds the existing matches below the literal prefix, whole directories included, links not followed', async () => {
    const tree = join(root, 'globs');
    await mkdir(join(tree, 'a', 'secrets', 'deep'), { recursive: true });
    await mkdir(join(tree, 'b', 'c'), { recursive: true });
    await writeFile(join(tree, 'a', '.env'), 'x');
    await writeFile(join(tree, 'b', 'c', 'prod.env'), 'x');
    await writeFile(join(tree, 'b', 'c', 'env.txt'), 'x');
    await writeFile(join(tree, 'a', 'secrets', 'deep', 'inner.env'), 'x');
    await symlink(join(root, 'w'), join(tree, 'b', 'escape'));
    expect(expandDenyGlobs([`${tree}/**/*.env`, `${tree}/a/secrets`])).toEqual(
      [
        join(tree, 'a', '.env'),
        join(tree, 'a', 'secrets'),
        join(tree, 'a', 'secrets', 'deep', 'inner.env'),
        join(tree, 'b', 'c', 'prod.env'),
      ].sort(),
    );
    expect(expandDenyGlobs([`${tree}/*/c/*.env`])).toEqual([join(tree, 'b', 'c', 'prod.env')]);
    expect(expandDenyGlobs([`${root}/no-such-dir/**/*.env`])).toEqual([]);
  });

  it('refuses a glob whose scan would exceed the entry limit', async () => {
    expect(() => expandDenyGlobs(['/usr/**/*.no-such-extension'])).toThrow(/needs more than 20000 entries/);
  });
});
