import { describe, expect, it } from 'vitest';
import {
  assertNotDeniedIdentity,
  assertWritable,
  decideWrite,
  EXECUTABLE_SURFACE,
  FsError,
  guardedInside,
  isDeniedPath,
  type PathGuard,
} from '../src/core.js';

const glob = (pattern: string) => ({ pattern });

const guard: PathGuard = {
  entries: [
    { path: '/w', reason: 'writable_root', rule: 'writable root' },
    { path: '/real/w', reason: 'writable_root', rule: 'writable root' },
    { path: '/w/.git', reason: 'protected', rule: 'protected metadata path .git' },
    { path: '/real/w/.git', reason: 'protected', rule: 'protected metadata path .git' },
    { path: '/w/docs', reason: 'read_only', rule: 'read-only entry /w/docs' },
    { path: '/w/docs/out', reason: 'writable_root', rule: 'writable root' },
    { path: '/w/.env', reason: 'denied', rule: 'denied path /w/.env' },
    { path: '/w/node_modules/fs-sandbox', reason: 'own_code', rule: "part of fs-sandbox's own installation" },
  ],
  denyGlobs: [glob('/w/**/*.pem')],
  deniedIdentities: ['10:20'],
  surface: { entries: [...EXECUTABLE_SURFACE], home: null },
};

describe('path guard', () => {
  it('lets plain writes inside a root, under either spelling', () => {
    expect(decideWrite(guard, '/w/src/a.ts', 'linux')).toEqual({ allowed: true, root: '/w' });
    expect(decideWrite(guard, '/real/w/src/a.ts', 'linux')).toEqual({ allowed: true, root: '/real/w' });
  });

  it('decides by the deepest entry: a writable root inside a read-only one is writable', () => {
    expect(decideWrite(guard, '/w/docs/readme', 'linux')).toMatchObject({
      allowed: false,
      kind: 'permission_denied',
    });
    expect(decideWrite(guard, '/w/docs/out/x', 'linux')).toEqual({ allowed: true, root: '/w/docs/out' });
  });

  it('names the rule for protected names, own code, denied paths, globs and the outside', () => {
    expect(decideWrite(guard, '/real/w/.git/config', 'linux')).toMatchObject({ kind: 'protected_path' });
    expect(decideWrite(guard, '/w/node_modules/fs-sandbox/dist/cli.js', 'linux')).toMatchObject({
      kind: 'protected_path',
      rule: "part of fs-sandbox's own installation",
    });
    expect(decideWrite(guard, '/w/.env', 'linux')).toMatchObject({ kind: 'permission_denied' });
    expect(decideWrite(guard, '/w/a/b/key.pem', 'linux')).toMatchObject({
      rule: 'denied by glob /w/**/*.pem',
    });
    expect(decideWrite(guard, '/etc/passwd', 'linux')).toMatchObject({ rule: 'outside writable roots' });
  });

  it('says where a write would really have gone', () => {
    expect(() => assertWritable(guard, '/w/.git/hooks/x', '/w/loop/.git/hooks/x', 'linux')).toThrow(
      'cannot write /w/loop/.git/hooks/x (it is /w/.git/hooks/x): protected metadata path .git',
    );
  });

  it('tells denied reads, guarded entries below a path, and denied identities', () => {
    expect(isDeniedPath(guard, '/w/.env', 'linux')).toBe(true);
    expect(isDeniedPath(guard, '/w/x/y.pem', 'linux')).toBe(true);
    expect(isDeniedPath(guard, '/w/x/y.txt', 'linux')).toBe(false);
    expect(guardedInside(guard, '/w/docs', 'linux').map((entry) => entry.path)).toEqual(['/w/docs/out']);
    expect(guardedInside(guard, '/w/src', 'linux')).toEqual([]);
    expect(() => assertNotDeniedIdentity(guard, { dev: 10n, ino: 20n }, '/w/link')).toThrow(FsError);
    expect(() => assertNotDeniedIdentity(guard, { dev: 10n, ino: 21n }, '/w/link')).not.toThrow();
  });
});
