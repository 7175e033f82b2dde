import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsError } from '@fs-sandbox/policy';
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

function failure(run: () => unknown): FsError {
  try {
    run();
  } catch (error) {
    if (error instanceof FsError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** A plan that shows the whole disk: no link target is left out for being unreadable. */
const SHOWS_ALL = () => true;

describe('expandDenyGlobs', () => {
  it('finds the existing matches below the literal prefix, whole directories included', async () => {
    const tree = join(root, 'globs');
    await mkdir(join(tree, 'a', 'secrets', 'deep'), { recursive: true });
    await mkdir(join(tree, 'b', 'c'), { recursive: true });
    await writeFile(join(tree, 'a', '.env'), 'x');
    await writeFile(join(tree, 'b', 'c', 'prod.env'), 'x');
    await writeFile(join(tree, 'b', 'c', 'env.txt'), 'x');
    await writeFile(join(tree, 'b', 'c', 'id.key'), 'x');
    await writeFile(join(tree, 'a', 'secrets', 'deep', 'inner.env'), 'x');
    await symlink(join(root, 'w', 'real', 'file.txt'), join(tree, 'b', 'file-link'));
    expect(expandDenyGlobs([`${tree}/**/*.env`, `${tree}/a/secrets`], SHOWS_ALL)).toEqual(
      [
        join(tree, 'a', '.env'),
        join(tree, 'a', 'secrets'),
        join(tree, 'a', 'secrets', 'deep', 'inner.env'),
        join(tree, 'b', 'c', 'prod.env'),
      ].sort(),
    );
    expect(expandDenyGlobs([`${tree}/*/c/*.env`], SHOWS_ALL)).toEqual([join(tree, 'b', 'c', 'prod.env')]);
    expect(expandDenyGlobs([`${tree}/**/*.{env,key}`], SHOWS_ALL)).toContain(join(tree, 'b', 'c', 'id.key'));
    expect(expandDenyGlobs([`${tree}/{a/secrets,b}/**`], SHOWS_ALL)).toEqual([
      join(tree, 'a', 'secrets'),
      join(tree, 'b'),
    ]);
    expect(expandDenyGlobs([`${root}/no-such-dir/**/*.env`], SHOWS_ALL)).toEqual([]);
  });

  it('scans through a prefix that is itself a symlink', async () => {
    await mkdir(join(root, 'w', 'real', 'keys'), { recursive: true });
    await writeFile(join(root, 'w', 'real', 'keys', 'a.pem'), 'x');
    expect(expandDenyGlobs([`${root}/w/link/**/*.pem`], SHOWS_ALL)).toEqual([
      join(root, 'w', 'link', 'keys', 'a.pem'),
    ]);
  });

  it('refuses unenforceable patterns with the policy refusal', () => {
    expect(() => expandDenyGlobs([`${root}/a/../secrets/**`], SHOWS_ALL)).toThrow(
      /cannot be enforced: it has a `..` segment/,
    );
  });

  it('refuses a glob whose scan would exceed the entry limit', async () => {
    const wide = join(root, 'wide');
    // 20 200 names of one file (a link is one system call; 20 000 writes timed out under load).
    await mkdir(wide);
    const one = join(wide, 'one');
    writeFileSync(one, '');
    for (let d = 0; d < 101; d++) {
      const dir = join(wide, `d${d}`);
      mkdirSync(dir);
      for (let f = 0; f < 200; f++) linkSync(one, join(dir, `f${f}`));
    }
    expect(() => expandDenyGlobs([`${wide}/**/*.pem`], SHOWS_ALL)).toThrow(
      /cannot be enforced: its scan needs more than 20000 entries to find every match; narrow the glob/,
    );
    expect(expandDenyGlobs([`${wide}/d7/*.pem`], SHOWS_ALL)).toEqual([]);
  });

  it('refuses a `**` glob with entries left at the depth bound, and not one whose deepest directory is empty', async () => {
    const levels = Array.from({ length: 32 }, (_, i) => `d${i + 1}`);
    const deepest = join(root, 'deep', ...levels);
    await mkdir(deepest, { recursive: true });
    expect(expandDenyGlobs([`${root}/deep/**/*.pem`], SHOWS_ALL)).toEqual([]);
    await writeFile(join(deepest, 'beyond.pem'), 'x');
    expect(() => expandDenyGlobs([`${root}/deep/**/*.pem`], SHOWS_ALL)).toThrow(
      /d32 is 32 levels below .*deep and still has entries that could match; narrow the glob/,
    );
    // A bounded pattern never needs to look that deep.
    expect(expandDenyGlobs([`${root}/deep/d1/*.pem`], SHOWS_ALL)).toEqual([]);
  });

  describe('symlinked directories inside the scanned area', () => {
    let ws: string;
    beforeAll(async () => {
      // pnpm's layout: node_modules/<name> links into node_modules/.pnpm/<name>@<v>/node_modules/<name>.
      ws = join(root, 'pnpm-ws');
      const real = join(ws, 'node_modules', '.pnpm', 'pkg@1.0.0', 'node_modules', 'pkg');
      await mkdir(real, { recursive: true });
      await writeFile(join(real, 'test.env'), 'x');
      await symlink('.pnpm/pkg@1.0.0/node_modules/pkg', join(ws, 'node_modules', 'pkg'));
    });

    it('leaves a link into the same prefix under `**` and one name: its real location is masked', () => {
      expect(expandDenyGlobs([`${ws}/**/*.env`], SHOWS_ALL)).toEqual([
        join(ws, 'node_modules', '.pnpm', 'pkg@1.0.0', 'node_modules', 'pkg', 'test.env'),
      ]);
    });

    it('refuses the same link when more of the pattern follows `**`, typed and naming the link', () => {
      // `<ws>/**/node_modules/*/*.env` matches <ws>/node_modules/pkg/x.env through the link's own name.
      const refusal = failure(() => expandDenyGlobs([`${ws}/**/node_modules/*/*.env`], SHOWS_ALL));
      expect(refusal.kind).toBe('permission_denied');
      expect(refusal.message).toMatch(
        /cannot be enforced beside the symlinked directory .*node_modules\/pkg \(-> /,
      );
      expect(refusal.extra).toMatchObject({ link: join(ws, 'node_modules', 'pkg') });
      // Unless the sandbox cannot show the target at all.
      expect(expandDenyGlobs([`${ws}/**/node_modules/*/*.env`], () => false)).toEqual([
        join(ws, 'node_modules', '.pnpm', 'pkg@1.0.0', 'node_modules', 'pkg', 'test.env'),
      ]);
    });

    it("leaves a link whose target lies outside the glob's scope, readable or not: the policy there decides", async () => {
      await mkdir(join(root, 'outside', 'keys'), { recursive: true });
      await writeFile(join(root, 'outside', 'keys', 'k.env'), 'x');
      await symlink(join(root, 'outside'), join(ws, 'out'));
      try {
        expect(expandDenyGlobs([`${ws}/**/*.env`], SHOWS_ALL)).toEqual([
          join(ws, 'node_modules', '.pnpm', 'pkg@1.0.0', 'node_modules', 'pkg', 'test.env'),
        ]);
        expect(expandDenyGlobs([`${ws}/*/keys`], () => false)).toEqual([]);
        // The link itself matching is a match, masked by name.
        expect(expandDenyGlobs([`${ws}/o*`], SHOWS_ALL)).toEqual([join(ws, 'out')]);
      } finally {
        await rm(join(ws, 'out'));
      }
    });

    it('refuses a link inside the scope a bounded pattern could match beneath, and ignores one it cannot', async () => {
      await mkdir(join(ws, 'data', 'keys'), { recursive: true });
      await symlink('data', join(ws, 'secret'));
      try {
        const refusal = failure(() => expandDenyGlobs([`${ws}/*/keys`], SHOWS_ALL));
        expect([refusal.kind, refusal.message]).toEqual([
          'permission_denied',
          expect.stringMatching(/symlinked directory .*secret \(-> .*data\)/),
        ]);
        // A glob whose prefix is the link scans its target under the link's name: nothing to refuse.
        expect(expandDenyGlobs([`${ws}/secret/*`], SHOWS_ALL)).toEqual([join(ws, 'secret', 'keys')]);
        expect(expandDenyGlobs([`${ws}/*.env`], SHOWS_ALL)).toEqual([]);
      } finally {
        await rm(join(ws, 'secret'));
        await rm(join(ws, 'data'), { recursive: true });
      }
    });
  });
});
