import type { SandboxPlan } from '@fs-sandbox/policy';
import { LANDLOCK_FS, LANDLOCK_READ, LANDLOCK_WRITE } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import { buildLandlockRules, type LandlockHostView } from '../src/backends/linux/landlock-rules.js';
import { emptyPlan } from './support/plans.js';

/** A made-up tree: directories end in `/`; `link -> target` entries are symlinks. */
function hostOf(paths: string[], links: Record<string, string> = {}): LandlockHostView {
  const dirs = new Set(['/']);
  const files = new Set<string>();
  for (const path of paths) {
    const clean = path.endsWith('/') ? path.slice(0, -1) : path;
    const parts = clean.split('/').filter(Boolean);
    for (let index = 1; index < parts.length; index += 1) dirs.add(`/${parts.slice(0, index).join('/')}`);
    (path.endsWith('/') ? dirs : files).add(clean);
  }
  const all = [...dirs, ...files, ...Object.keys(links)];
  return {
    real(path) {
      for (const [link, target] of Object.entries(links))
        if (path === link || path.startsWith(`${link}/`)) return target + path.slice(link.length);
      return dirs.has(path) || files.has(path) ? path : null;
    },
    isDirectory: (real) => dirs.has(real),
    children(real) {
      const prefix = real === '/' ? '/' : `${real}/`;
      return all
        .filter(
          (path) => path !== real && path.startsWith(prefix) && !path.slice(prefix.length).includes('/'),
        )
        .map((path) => ({ name: path.slice(prefix.length), symlink: path in links }));
    },
  };
}

function plan(overrides: Partial<SandboxPlan>): SandboxPlan {
  return emptyPlan('linux', overrides);
}

const WRITE = LANDLOCK_WRITE | LANDLOCK_READ;
const ws = (extra: Partial<SandboxPlan['writableRoots'][number]> = {}) => ({
  root: '/ws',
  readOnlySubpaths: [],
  protectedNames: [],
  ...extra,
});

describe('Landlock rules', () => {
  const tree = hostOf([
    '/ws/.git/',
    '/ws/.env',
    '/ws/src/',
    '/ws/a.txt',
    '/ws/secret/k',
    '/usr/bin/',
    '/proc/',
    '/dev/null',
  ]);

  it('grants a plain writable root as one rule, /proc read and the safe devices', () => {
    const { rules, cwd } = buildLandlockRules(plan({ writableRoots: [ws()], cwd: '/ws' }), [], [], tree, {
      command: false,
    });
    expect(rules).toEqual([
      { path: '/proc', mask: LANDLOCK_READ },
      { path: '/ws', mask: WRITE },
      { path: '/dev/null', mask: LANDLOCK_FS.readFile | LANDLOCK_FS.writeFile },
    ]);
    expect(cwd).toBe('/ws');
  });

  it('carves a denied directory out by granting each sibling; for a command the parent keeps nothing', () => {
    const rulesFor = (command: boolean) =>
      buildLandlockRules(plan({ writableRoots: [ws()], deniedPaths: ['/ws/secret'] }), [], [], tree, {
        command,
      }).rules.filter((rule) => rule.path.startsWith('/ws'));
    for (const command of [true, false]) {
      const ws_ = rulesFor(command);
      expect(ws_).toEqual(
        expect.arrayContaining([
          { path: '/ws/.git', mask: WRITE },
          { path: '/ws/.env', mask: WRITE },
          { path: '/ws/src', mask: WRITE },
          { path: '/ws/a.txt', mask: WRITE },
        ]),
      );
      expect(ws_.some((rule) => rule.path.startsWith('/ws/secret'))).toBe(false);
    }
    expect(rulesFor(true).some((rule) => rule.path === '/ws')).toBe(false);
    // The helper's guard refuses writes into the denied directory by where they land: the parent
    // keeps the writes (so files beside it can be made and replaced), never a read, list or execute.
    expect(rulesFor(false)).toContainEqual({ path: '/ws', mask: LANDLOCK_WRITE & ~LANDLOCK_READ });
  });

  it('keeps listing above a denied file, and nothing that reaches its content', () => {
    const rulesFor = (command: boolean) =>
      buildLandlockRules(plan({ writableRoots: [ws()], deniedPaths: ['/ws/.env'] }), [], [], tree, {
        command,
      }).rules;
    const listing = LANDLOCK_FS.readDir | LANDLOCK_FS.makeDir;
    expect(rulesFor(true)).toContainEqual({ path: '/ws', mask: listing });
    expect(rulesFor(false)).toContainEqual({
      path: '/ws',
      mask: (LANDLOCK_WRITE & ~LANDLOCK_READ) | listing,
    });
    for (const command of [true, false]) {
      const above = rulesFor(command).find((rule) => rule.path === '/ws')?.mask ?? -1;
      expect(above & (LANDLOCK_FS.readFile | LANDLOCK_FS.execute)).toBe(0);
      expect(rulesFor(command).some((rule) => rule.path === '/ws/.env')).toBe(false);
    }
  });

  it('carves a read-only path for the helper as for a command (the guard may not know its real name)', () => {
    const root = ws({ readOnlySubpaths: ['/ws/src'] });
    for (const command of [true, false]) {
      const rules = buildLandlockRules(plan({ writableRoots: [root] }), [], [], tree, { command }).rules;
      expect(rules).toContainEqual({ path: '/ws', mask: LANDLOCK_READ });
      expect(rules).toContainEqual({ path: '/ws/src', mask: LANDLOCK_READ });
      expect(rules).toContainEqual({ path: '/ws/a.txt', mask: WRITE });
    }
  });

  it("carves a command's top-level .git read-only, not the helper's (its guard protects it)", () => {
    const root = ws({ protectedNames: ['.git', '.codex'] });
    const command = buildLandlockRules(plan({ writableRoots: [root] }), [], [], tree, {
      command: true,
    }).rules;
    expect(command).toContainEqual({ path: '/ws', mask: LANDLOCK_READ });
    expect(command).toContainEqual({ path: '/ws/.git', mask: LANDLOCK_READ });
    expect(command).toContainEqual({ path: '/ws/src', mask: WRITE });
    const helper = buildLandlockRules(plan({ writableRoots: [root] }), [], [], tree, {
      command: false,
    }).rules;
    expect(helper).toContainEqual({ path: '/ws', mask: WRITE });
  });

  it('carves where the denied object really lies, whatever the deny spelled', () => {
    const linked = hostOf(['/ws/secret/k', '/ws/a.txt', '/proc/'], { '/alias': '/ws/secret' });
    const { rules } = buildLandlockRules(
      plan({ writableRoots: [ws()], deniedPaths: ['/alias'] }),
      [],
      [],
      linked,
      {
        command: true,
      },
    );
    expect(rules.some((rule) => rule.path === '/ws')).toBe(false);
    expect(rules).toContainEqual({ path: '/ws/a.txt', mask: WRITE });
  });

  it('gives a sibling symlink no rule (its target is judged where it lies)', () => {
    const linked = hostOf(['/ws/secret/', '/ws/a.txt', '/etc/passwd', '/proc/'], { '/ws/etc': '/etc' });
    const { rules } = buildLandlockRules(
      plan({ writableRoots: [ws()], deniedPaths: ['/ws/secret'] }),
      [],
      [],
      linked,
      {
        command: false,
      },
    );
    expect(rules.some((rule) => rule.path.startsWith('/etc') || rule.path === '/ws/etc')).toBe(false);
  });

  it('closes the host /dev under a full-disk read, listing aside', () => {
    const { rules } = buildLandlockRules(plan({ fullDiskRead: true }), [], [], tree, { command: true });
    expect(rules).toContainEqual({ path: '/', mask: LANDLOCK_FS.readDir });
    expect(rules).toContainEqual({ path: '/usr', mask: LANDLOCK_READ });
    expect(rules.some((rule) => rule.path === '/dev')).toBe(false);
    expect(rules).toContainEqual({ path: '/dev/null', mask: LANDLOCK_FS.readFile | LANDLOCK_FS.writeFile });
  });

  it('refuses a cwd the rules do not show', () => {
    const { cwd } = buildLandlockRules(
      plan({ writableRoots: [ws()], deniedPaths: ['/ws/secret'], cwd: '/ws/secret' }),
      [],
      [],
      tree,
      { command: true },
    );
    expect(cwd).toBe('/');
  });
});
