import { describe, expect, it } from 'vitest';
import { FsError } from '../src/error-kinds.js';
import { accessFor, checkAccess } from '../src/permissions/access.js';
import { EXECUTABLE_SURFACE, executableSurface } from '../src/permissions/executable-surface.js';
import { glob, pathEntry, projectRoots, restricted, special, unknownSpecial } from './support/contexts.js';

const surfaceReason = (path: string) => EXECUTABLE_SURFACE.find((entry) => entry.path === path)?.reason;

describe('accessFor', () => {
  it('lets the deepest entry win', () => {
    const profile = restricted(pathEntry('file:///w', 'write'), pathEntry('file:///w/ro', 'read'));
    expect(accessFor(profile, '/w/x', 'linux')).toEqual({ access: 'write', entry: 'file:///w:write' });
    expect(accessFor(profile, '/w/ro/x', 'linux')).toEqual({ access: 'read', entry: 'file:///w/ro:read' });
    expect(accessFor(profile, '/w/ro', 'linux').access).toBe('read');
    const deeperWrite = restricted(pathEntry('file:///w', 'deny'), pathEntry('file:///w/ok', 'write'));
    expect(accessFor(deeperWrite, '/w/ok/x', 'linux').access).toBe('write');
    expect(accessFor(deeperWrite, '/w/other', 'linux').access).toBe('deny');
  });
  it('breaks ties deny > write > read, whatever the entry order', () => {
    const rw = [pathEntry('file:///w', 'read'), pathEntry('file:///w', 'write')];
    expect(accessFor(restricted(...rw), '/w/a', 'linux').access).toBe('write');
    expect(accessFor(restricted(...rw.reverse()), '/w/a', 'linux').access).toBe('write');
    expect(
      accessFor(restricted(pathEntry('file:///w', 'write'), pathEntry('file:///w', 'deny')), '/w', 'linux'),
    ).toEqual({
      access: 'deny',
      entry: 'file:///w:deny',
    });
    expect(
      accessFor(restricted(pathEntry('file:///w', 'deny'), pathEntry('file:///w', 'read')), '/w', 'linux')
        .access,
    ).toBe('deny');
    expect(
      accessFor(restricted(special('root', 'read'), pathEntry('file:///', 'write')), '/x', 'linux').access,
    ).toBe('write');
  });
  it('denies what nothing matches, with no deciding entry', () => {
    expect(accessFor(restricted(pathEntry('file:///w', 'write')), '/etc/passwd', 'linux')).toEqual({
      access: 'deny',
      entry: null,
    });
    expect(accessFor(restricted(), '/w', 'linux')).toEqual({ access: 'deny', entry: null });
  });
  it('matches whole segments only', () => {
    const profile = restricted(pathEntry('file:///w', 'write'));
    expect(accessFor(profile, '/wx', 'linux').access).toBe('deny');
    expect(accessFor(profile, '/w/../etc', 'linux').access).toBe('deny');
  });
  it('lets `root` match everything at depth 0', () => {
    const profile = restricted(special('root', 'read'), pathEntry('file:///w', 'write'));
    expect(accessFor(profile, '/etc/passwd', 'linux')).toEqual({ access: 'read', entry: 'root:read' });
    expect(accessFor(profile, '/', 'linux').access).toBe('read');
    expect(accessFor(profile, '/w/a', 'linux').access).toBe('write');
    expect(accessFor(restricted(special('root', 'read')), 'D:\\data', 'windows').access).toBe('read');
  });
  it('gives write everywhere for unrestricted, disabled and external profiles', () => {
    for (const profile of [
      {
        type: 'managed' as const,
        file_system: { type: 'unrestricted' as const },
        network: 'restricted' as const,
      },
      { type: 'disabled' as const },
      { type: 'external' as const },
    ]) {
      expect(accessFor(profile, '/anything', 'linux')).toEqual({ access: 'write', entry: null });
    }
  });
  it('treats a matching deny glob as decisive, also for descendants', () => {
    const profile = restricted(
      pathEntry('file:///w', 'write'),
      pathEntry('file:///w/sub', 'write'),
      glob('/w/**/*.env'),
    );
    expect(accessFor(profile, '/w/sub/.env', 'linux')).toEqual({ access: 'deny', entry: '/w/**/*.env:deny' });
    expect(accessFor(profile, '/w/a.env/inner', 'linux').access).toBe('deny');
    expect(accessFor(profile, '/w/sub/env', 'linux').access).toBe('write');
  });
  it('never grants through glob or unknown entries', () => {
    expect(accessFor(restricted(glob('/w/*.txt', 'read')), '/w/a.txt', 'linux').access).toBe('deny');
    expect(accessFor(restricted(unknownSpecial('write')), '/home/u', 'linux').access).toBe('deny');
  });
  it('covers the minimal roots and /tmp for their specials', () => {
    const profile = restricted(special('minimal', 'read'), special('slash_tmp', 'write'));
    expect(accessFor(profile, '/usr/lib/x.so', 'linux').access).toBe('read');
    expect(accessFor(profile, '/home', 'linux').access).toBe('deny');
    expect(accessFor(profile, '/tmp/x', 'linux').access).toBe('write');
    expect(accessFor(profile, 'C:\\Windows\\System32', 'windows').access).toBe('read');
  });
  it('refuses an unresolved project_roots entry rather than guessing', () => {
    expect(() => accessFor(restricted(projectRoots('write')), '/w', 'linux')).toThrow(FsError);
  });
  it('refuses a relative native path', () => {
    expect(() => accessFor(restricted(), 'w/x', 'linux')).toThrow(/not an absolute path/);
  });
  it('applies Windows rules: case-insensitive, per drive', () => {
    const profile = restricted(
      pathEntry('file:///C:/Work', 'write'),
      pathEntry('file:///C:/Work/Secret', 'deny'),
    );
    expect(accessFor(profile, 'c:\\work\\a.txt', 'windows').access).toBe('write');
    expect(accessFor(profile, 'C:\\WORK\\SECRET\\k', 'windows').access).toBe('deny');
    expect(accessFor(profile, 'D:\\Work\\a.txt', 'windows').access).toBe('deny');
  });
});

describe('checkAccess', () => {
  const ww = restricted(
    pathEntry('file:///ro', 'read'),
    pathEntry('file:///w', 'write'),
    pathEntry('file:///w/.env', 'deny'),
  );
  it('allows what the policy grants', () => {
    expect(checkAccess(ww, '/ro/a', 'read', 'linux')).toEqual({ allowed: true });
    expect(checkAccess(ww, '/w/a', 'write', 'linux')).toEqual({ allowed: true });
    expect(checkAccess(ww, '/w/a', 'read', 'linux')).toEqual({ allowed: true });
  });
  it('names the rule of a refusal', () => {
    expect(checkAccess(ww, '/etc/passwd', 'read', 'linux')).toEqual({
      allowed: false,
      kind: 'permission_denied',
      rule: 'outside readable roots',
    });
    expect(checkAccess(ww, '/ro/a', 'write', 'linux')).toEqual({
      allowed: false,
      kind: 'permission_denied',
      rule: 'outside writable roots',
    });
    expect(checkAccess(ww, '/elsewhere', 'write', 'linux')).toEqual({
      allowed: false,
      kind: 'permission_denied',
      rule: 'outside writable roots',
    });
    expect(checkAccess(ww, '/w/.env', 'read', 'linux')).toEqual({
      allowed: false,
      kind: 'permission_denied',
      rule: 'denied by entry file:///w/.env:deny',
    });
  });
  it('refuses writes to .git, .agents and .codex under a writable root, naming the reason', () => {
    expect(checkAccess(ww, '/w/.git/HEAD', 'write', 'linux')).toEqual({
      allowed: false,
      kind: 'protected_path',
      rule: `protected metadata path .git (${surfaceReason('.git')})`,
    });
    expect(checkAccess(ww, '/w/.git', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
      surfaceLeaf: true,
    });
    expect(checkAccess(ww, '/w/.agents/x', 'write', 'linux')).toMatchObject({
      rule: expect.stringContaining('protected metadata path .agents'),
    });
    expect(checkAccess(ww, '/w/.codex', 'write', 'linux')).toMatchObject({
      rule: expect.stringContaining('protected metadata path .codex'),
    });
    expect(checkAccess(ww, '/w/.git/HEAD', 'read', 'linux')).toEqual({ allowed: true });
    expect(checkAccess(ww, '/w/sub/.gitignore', 'write', 'linux')).toEqual({ allowed: true });
  });
  it('refuses them at any depth, in every writable root', () => {
    const nested = restricted(pathEntry('file:///w', 'write'), pathEntry('file:///w/pkg', 'write'));
    expect(checkAccess(nested, '/w/pkg/.git/config', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(nested, '/w/pkg/src/.git', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(ww, '/w/vendor/lib/.git/hooks/pre-commit', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(ww, '/w/a/b/.codex/config.toml', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(ww, '/w/a/.agents/skills/x/SKILL.md', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(ww, '/w/a/git/x', 'write', 'linux')).toEqual({ allowed: true });
  });
  it('protects what the policy adds, names and relative paths alike', () => {
    const surface = executableSurface(['.vscode/tasks.json', '.envrc']);
    expect(checkAccess(ww, '/w/.vscode/tasks.json', 'write', 'linux', surface)).toMatchObject({
      rule: 'protected metadata path .vscode/tasks.json (protected by the policy)',
    });
    expect(checkAccess(ww, '/w/sub/.envrc', 'write', 'linux', surface)).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(ww, '/w/.vscode/settings.json', 'write', 'linux', surface)).toEqual({ allowed: true });
  });
  it('allows an explicit grant inside a protected name', () => {
    const granted = restricted(pathEntry('file:///w', 'write'), pathEntry('file:///w/.git', 'write'));
    expect(checkAccess(granted, '/w/.git/HEAD', 'write', 'linux')).toEqual({ allowed: true });
    const hooks = restricted(pathEntry('file:///w', 'write'), pathEntry('file:///w/.git/hooks', 'write'));
    expect(checkAccess(hooks, '/w/.git/hooks/pre-commit', 'write', 'linux')).toEqual({ allowed: true });
    expect(checkAccess(hooks, '/w/.git/HEAD', 'write', 'linux')).toMatchObject({ kind: 'protected_path' });
  });
  it('matches protected names case-insensitively on every OS (a case-folding file system, a tree read on a Mac)', () => {
    const profile = restricted(pathEntry('file:///w', 'write'));
    expect(checkAccess(profile, '/w/.GIT/HEAD', 'write', 'macos')).toMatchObject({ kind: 'protected_path' });
    expect(checkAccess(profile, '/w/.GIT/HEAD', 'write', 'linux')).toMatchObject({ kind: 'protected_path' });
    const windows = restricted(pathEntry('file:///C:/w', 'write'));
    expect(checkAccess(windows, 'C:\\w\\.Git\\HEAD', 'write', 'windows')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(windows, 'C:\\w\\.git. \\HEAD', 'write', 'windows')).toMatchObject({
      kind: 'protected_path',
    });
  });
  it('protects metadata under a narrowed root:write', () => {
    const profile = restricted(special('root', 'write'), pathEntry('file:///etc', 'read'));
    expect(checkAccess(profile, '/.git/x', 'write', 'linux')).toMatchObject({ kind: 'protected_path' });
    expect(checkAccess(profile, '/home/u/.git/x', 'write', 'linux')).toMatchObject({
      kind: 'protected_path',
    });
    expect(checkAccess(profile, '/home/u/git/x', 'write', 'linux')).toEqual({ allowed: true });
  });
  it('allows everything for unrestricted profiles', () => {
    expect(checkAccess({ type: 'disabled' }, '/w/.git/HEAD', 'write', 'linux')).toEqual({ allowed: true });
  });
});
