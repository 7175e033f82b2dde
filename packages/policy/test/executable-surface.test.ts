import { describe, expect, it } from 'vitest';
import {
  completesGitDirectory,
  configPath,
  decideWrite,
  EXECUTABLE_SURFACE,
  executableSurface,
  type GitDirectoryMarker,
  gitfileTarget,
  type PathGuard,
  parseGitConfig,
  repositoryDataDecision,
  repositoryHooksDirectories,
  type SurfaceProbe,
  surfaceDecisionAtLeaf,
  surfaceMatch,
  surfaceOfChild,
  surfaceOfDirectory,
  surfaceRefusal,
} from '../src/core.js';

const guard: PathGuard = {
  entries: [
    { path: '/w', reason: 'writable_root', rule: 'writable root' },
    { path: '/w/granted/.git', reason: 'writable_root', rule: 'writable root' },
  ],
  denyGlobs: [],
  deniedIdentities: [],
  surface: { entries: executableSurface(['.vscode/tasks.json']), home: '/home/u' },
};

describe('the executable surface by name', () => {
  it('lists each fixed entry with its reason', () => {
    expect(EXECUTABLE_SURFACE.map((entry) => entry.path)).toEqual([
      '.git',
      '.agents',
      '.codex',
      'fs-sandbox.toml',
    ]);
    for (const entry of EXECUTABLE_SURFACE) expect(entry.reason.length).toBeGreaterThan(10);
  });

  it('matches at any depth, folded, and names with several segments', () => {
    const entries = guard.surface.entries;
    expect(surfaceMatch(entries, ['a', '.git', 'config'], 'linux')).toMatchObject({ end: 1 });
    expect(surfaceMatch(entries, ['a', '.Codex'], 'linux')).toMatchObject({ end: 1 });
    expect(surfaceMatch(entries, ['.vscode', 'tasks.json'], 'linux')).toMatchObject({ end: 1 });
    expect(surfaceMatch(entries, ['.vscode', 'settings.json'], 'linux')).toBeNull();
    expect(surfaceMatch(entries, ['.gitignore'], 'linux')).toBeNull();
    expect(surfaceMatch(entries, ['x', '.git. '], 'windows')).toMatchObject({ end: 1 });
  });

  it('decides writes below every writable root, with the leaf marked and explicit grants honoured', () => {
    expect(decideWrite(guard, '/w/a/b/.git', 'linux')).toMatchObject({
      kind: 'protected_path',
      surfaceLeaf: true,
    });
    const inside = decideWrite(guard, '/w/a/.git/hooks/pre-commit', 'linux');
    expect(inside).toMatchObject({ allowed: false, kind: 'protected_path' });
    expect(inside).not.toHaveProperty('surfaceLeaf');
    expect(decideWrite(guard, '/w/granted/.git/config', 'linux')).toEqual({
      allowed: true,
      root: '/w/granted/.git',
    });
    expect(decideWrite(guard, '/w/.vscode/tasks.json', 'linux')).toMatchObject({ kind: 'protected_path' });
    // A command's commit: repository data inside an existing `.git` is the helper's to judge; a new
    // `.git` only where the policy allows a nested repository.
    expect(decideWrite(guard, '/w/a/.git/objects/ab/cd', 'linux', { repositoryData: true })).toMatchObject({
      allowed: true,
    });
    expect(decideWrite(guard, '/w/a/.git', 'linux', { repositoryData: true })).toMatchObject({
      allowed: false,
    });
    expect(
      decideWrite(guard, '/w/vendor/x/.git', 'linux', { nestedRepositories: ['/w/vendor'] }),
    ).toMatchObject({ allowed: true });
    expect(decideWrite(guard, '/w/.codex/x', 'linux', { repositoryData: true })).toMatchObject({
      allowed: false,
    });
  });

  it('judges a tree entry by its own name alone, never above the writable root', () => {
    expect(surfaceDecisionAtLeaf(guard, '/w', '/w/a/.git', 'linux')).toMatchObject({ surfaceLeaf: true });
    expect(surfaceDecisionAtLeaf(guard, '/w', '/w/.vscode/tasks.json', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(surfaceDecisionAtLeaf(guard, '/w', '/w/a/b', 'linux')).toBeNull();
    expect(surfaceDecisionAtLeaf(guard, '/', '/.git', 'linux')).toMatchObject({ kind: 'protected_path' });
    expect(surfaceDecisionAtLeaf(guard, '/w/.vscode', '/w/.vscode/tasks.json', 'linux')).toBeNull();
  });

  it("checks a policy's additions", () => {
    expect(() => executableSurface(['../x'])).toThrow('plain names');
    expect(() => executableSurface(Array.from({ length: 65 }, (_, i) => `n${i}`))).toThrow('at most 64');
  });
});

describe("git's own files", () => {
  it('reads core.hooksPath, core.worktree and includes as git does', () => {
    const text = [
      '# comment',
      '[core]',
      '\tbare = false ; trailing',
      '\thooksPath = ".husky/_"  # husky',
      '[CORE] HOOKSPATH = /abs/hooks',
      '[core "sub"]',
      '\thooksPath = not-core',
      '[include]',
      '\tpath = ~/shared.cfg',
      '[includeIf "gitdir:~/work/"]',
      '\tpath = work.cfg',
      '[core]',
      '\tworktree = ../tree',
      '\thooksPath = spaced\\',
      ' continued',
    ].join('\n');
    expect(parseGitConfig(text)).toEqual({
      hooksPaths: ['.husky/_', '/abs/hooks', 'spaced continued'],
      worktrees: ['../tree'],
      includes: ['~/shared.cfg', 'work.cfg'],
    });
  });

  it('resolves config paths and gitfiles', () => {
    expect(configPath('~/x', '/w', '/home/u', 'linux')).toBe('/home/u/x');
    expect(configPath('~/x', '/w', null, 'linux')).toBeNull();
    expect(configPath('~other/x', '/w', '/home/u', 'linux')).toBeNull();
    expect(configPath('../h', '/w/r', null, 'linux')).toBe('/w/h');
    expect(gitfileTarget('gitdir: ../stash\n')).toBe('../stash');
    expect(gitfileTarget('ref: x')).toBeNull();
  });

  it('finds the hooks directories of a repository through its gitfile, commondir and includes', () => {
    const files: Record<string, string> = {
      '/w/app/.git': 'gitdir: /w/main/.git/worktrees/app\n',
      '/w/main/.git/worktrees/app/commondir': '../..\n',
      '/w/main/.git/config': '[include]\n\tpath = more.cfg\n',
      '/w/main/.git/more.cfg': '[core]\n\thooksPath = .githooks\n',
    };
    const probe = {
      kind: (path: string) => (path in files ? ('file' as const) : null),
      read: (path: string) => files[path] ?? null,
    };
    expect(repositoryHooksDirectories('/w/app', probe, null, 'linux').sort()).toEqual([
      '/w/app/.githooks',
      '/w/main/.git/worktrees/app/.githooks',
    ]);
  });

  it('knows a git directory by its layout, and which entries are data', () => {
    const present = (...names: GitDirectoryMarker[]) => new Set(names);
    expect(completesGitDirectory(present('objects', 'refs'), 'HEAD')).toBe(true);
    expect(completesGitDirectory(present('HEAD', 'refs'), 'objects')).toBe(true);
    expect(completesGitDirectory(present('HEAD'), 'commondir')).toBe(true);
    expect(completesGitDirectory(present('objects', 'refs'), 'head')).toBe(true);
    expect(completesGitDirectory(present('HEAD'), 'refs')).toBe(false);
    expect(completesGitDirectory(present('objects', 'refs'), 'config')).toBe(false);
    for (const path of ['objects/ab/cdef', 'refs/heads/main', 'logs/HEAD', 'index', 'HEAD', 'info/exclude']) {
      expect(repositoryDataDecision(path.split('/'))).toEqual({ allowed: true });
    }
    for (const path of [
      'config',
      'hooks/pre-commit',
      'info/attributes',
      'commondir',
      'objects/info/alternates',
      'index.lock',
      'modules/x/config',
    ]) {
      expect(repositoryDataDecision(path.split('/'))).toMatchObject({ allowed: false });
    }
  });
});

describe('the surface judge on the files', () => {
  /** A probe over a made-up tree: directories end in `/`. */
  function probeOf(tree: string[], directory: string): SurfaceProbe {
    const has = (path: string) => tree.includes(path) || tree.includes(`${path}/`);
    return {
      entry(levels, name) {
        let at = directory;
        for (let level = 0; level < levels; level++) at = at.slice(0, at.lastIndexOf('/')) || '/';
        const path = `${at === '/' ? '' : at}/${name}`;
        return tree.includes(`${path}/`) ? 'directory' : has(path) ? 'file' : null;
      },
      kind: (path) => (tree.includes(`${path}/`) ? 'directory' : has(path) ? 'file' : null),
      read: (path) => (path === '/w/app/.git/config' ? '[core]\n\thooksPath = .husky\n' : null),
    };
  }
  const tree = [
    '/w/app/',
    '/w/app/.git/',
    '/w/app/.git/HEAD',
    '/w/app/.git/objects/',
    '/w/app/.git/refs/',
    '/w/stash/',
    '/w/stash/HEAD',
    '/w/stash/objects/',
    '/w/stash/refs/',
    '/w/half/',
    '/w/half/objects/',
    '/w/half/refs/',
  ];

  it('finds the git directory a path lies in, named or laid out', () => {
    const inStash = surfaceOfDirectory(guard, '/w/stash', probeOf(tree, '/w/stash'), 'linux');
    expect(inStash.gitDirectory).toBe('/w/stash');
    expect(surfaceRefusal(inStash, 'config', 'create', 'linux')).toContain(
      'inside the git directory /w/stash',
    );
    const inGit = surfaceOfDirectory(guard, '/w/app/.git/refs', probeOf(tree, '/w/app/.git/refs'), 'linux');
    expect(inGit.gitDirectory).toBe('/w/app/.git');
    expect(surfaceRefusal(inGit, 'heads', 'create', 'linux', { repositoryData: true })).toBeNull();
    const objects = surfaceOfChild(inGit, 'x', null, 'linux');
    expect(objects.gitDirectory).toBe('/w/app/.git');
  });

  it('refuses completing a layout, and the hooks directory a repository names', () => {
    const half = surfaceOfDirectory(guard, '/w/half', probeOf(tree, '/w/half'), 'linux');
    expect(surfaceRefusal(half, 'HEAD', 'create', 'linux')).toContain('would make /w/half a git directory');
    expect(surfaceRefusal(half, 'README', 'create', 'linux')).toBeNull();
    const app = surfaceOfDirectory(guard, '/w/app', probeOf(tree, '/w/app'), 'linux');
    expect(app.hooks).toContain('/w/app/.husky');
    expect(surfaceRefusal(app, '.husky', 'create', 'linux')).toContain('core.hooksPath');
    const husky = surfaceOfChild(app, '.husky', null, 'linux');
    expect(surfaceRefusal(husky, 'pre-commit', 'create', 'linux')).toContain('core.hooksPath');
    expect(surfaceRefusal(app, 'src', 'create', 'linux')).toBeNull();
  });

  it('has nothing to say below an explicit grant or outside the roots', () => {
    const granted = surfaceOfDirectory(guard, '/w/granted/.git', probeOf(tree, '/w/granted/.git'), 'linux');
    expect(surfaceRefusal(granted, 'config', 'create', 'linux')).toBeNull();
    const outside = surfaceOfDirectory(guard, '/etc', probeOf(tree, '/etc'), 'linux');
    expect(surfaceRefusal(outside, 'x', 'create', 'linux')).toBeNull();
  });
});
