import { describe, expect, it } from 'vitest';
import { EXECUTABLE_SURFACE } from '../src/core.js';
import type { PathGuard } from '../src/path-guard.js';
import { explainAccess, type PhysicalFacts } from '../src/permissions/explain-access.js';
import { pathEntry, restricted, special } from './support/contexts.js';

const guard: PathGuard = {
  entries: [
    { path: '/w', reason: 'writable_root', rule: 'writable root' },
    { path: '/w/.git', reason: 'protected', rule: 'protected metadata path .git' },
    { path: '/w/node_modules/fs-sandbox', reason: 'own_code', rule: "part of fs-sandbox's own installation" },
    { path: '/w/.env', reason: 'denied', rule: 'denied by entry file:///w/.env:deny' },
  ],
  denyGlobs: [],
  deniedIdentities: [],
  surface: { entries: [...EXECUTABLE_SURFACE], home: null },
};

const profile = restricted(
  special('root', 'read'),
  pathEntry('file:///w', 'write'),
  pathEntry('file:///w/.env', 'deny'),
  pathEntry('file:///w/ro', 'read'),
);

/** What the sandbox shows every program (the runtime's reads). */
const runtime = {
  os: 'linux' as const,
  helperFiles: ['/opt/fs/node', '/opt/fs/helper.cjs'],
  minimalRootsPresent: ['/usr', '/etc', '/lib'],
};

/** Facts of a path that is what it says (no symlink anywhere). */
function plain(path: string): PhysicalFacts {
  return { guard, resolved: path, writeTarget: path, isSymlink: false, surfaceRefusal: null, runtime };
}

describe('explainAccess', () => {
  it('names the entry that decides a writable, a read-only and a denied path', () => {
    expect(explainAccess(profile, '/w/src/a.ts', 'linux', plain('/w/src/a.ts'))).toMatchObject({
      access: 'write',
      entry: 'file:///w:write',
    });
    expect(explainAccess(profile, '/w/ro/x', 'linux', plain('/w/ro/x'))).toEqual({
      access: 'read',
      reason: 'outside writable roots',
      entry: 'file:///w/ro:read',
    });
    expect(explainAccess(profile, '/w/.env', 'linux', plain('/w/.env'))).toEqual({
      access: 'none',
      reason: 'denied by entry file:///w/.env:deny',
      entry: 'file:///w/.env:deny',
    });
  });

  it('marks protected metadata and fs-sandbox’s own code as protected, readable only', () => {
    expect(explainAccess(profile, '/w/.git/config', 'linux', plain('/w/.git/config'))).toEqual({
      access: 'read',
      reason: `protected metadata path .git (${EXECUTABLE_SURFACE[0]?.reason})`,
      entry: 'file:///w:write',
      protected: true,
    });
    const own = explainAccess(
      profile,
      '/w/node_modules/fs-sandbox/x.js',
      'linux',
      plain('/w/node_modules/fs-sandbox/x.js'),
    );
    expect(own).toMatchObject({ access: 'read', protected: true });
    expect(own.reason).toContain('own installation');
  });

  it('judges a path by where it really leads: a link to a denied file, a link leaf, a parent link into .git', () => {
    const toSecret = {
      guard,
      resolved: '/w/.env',
      writeTarget: '/w/alias',
      isSymlink: true,
      surfaceRefusal: null,
      runtime,
    };
    expect(explainAccess(profile, '/w/alias', 'linux', toSecret)).toMatchObject({ access: 'none' });
    expect(explainAccess(profile, '/w/alias', 'linux', toSecret).reason).toContain('(it is /w/.env)');
    const link = {
      guard,
      resolved: '/w/target',
      writeTarget: '/w/link',
      isSymlink: true,
      surfaceRefusal: null,
      runtime,
    };
    expect(explainAccess(profile, '/w/link', 'linux', link)).toMatchObject({ access: 'read' });
    const viaParent = {
      guard,
      resolved: '/w/.git/HEAD',
      writeTarget: '/w/.git/HEAD',
      isSymlink: false,
      surfaceRefusal: null,
      runtime,
    };
    expect(explainAccess(profile, '/w/g/HEAD', 'linux', viaParent)).toMatchObject({
      access: 'read',
      protected: true,
    });
    const outside = {
      guard,
      resolved: '/secret/x',
      writeTarget: '/secret/x',
      isSymlink: true,
      surfaceRefusal: null,
      runtime,
    };
    const readOnlyRoot = restricted(pathEntry('file:///w', 'write'));
    expect(explainAccess(readOnlyRoot, '/w/out', 'linux', outside)).toMatchObject({
      access: 'none',
      reason: 'outside readable roots (it is /secret/x)',
    });
  });

  it('gives no access outside every root, with no deciding entry: /etc is configuration, not the runtime', () => {
    const narrow = restricted(pathEntry('file:///w', 'write'));
    expect(explainAccess(narrow, '/etc/passwd', 'linux', plain('/etc/passwd'))).toEqual({
      access: 'none',
      reason: 'outside readable roots',
    });
    expect(explainAccess(narrow, '/secret/x', 'linux', plain('/secret/x'))).toMatchObject({ access: 'none' });
  });

  it('reports what every sandbox shows to start a program as readable, naming that rule', () => {
    const narrow = restricted(pathEntry('file:///w', 'write'));
    expect(explainAccess(narrow, '/usr/bin/env', 'linux', plain('/usr/bin/env'))).toEqual({
      access: 'read',
      reason:
        "no policy entry grants it, but every sandbox shows /usr read-only so that a program can start (the runtime's own reads)",
    });
    expect(
      explainAccess(narrow, '/opt/fs/helper.cjs', 'linux', plain('/opt/fs/helper.cjs')).reason,
    ).toContain('shows /opt/fs/helper.cjs read-only');
    // Not the folder around a helper file, nor a sibling of it.
    expect(explainAccess(narrow, '/opt/fs/secret', 'linux', plain('/opt/fs/secret')).access).toBe('none');
    // Judged by both names: /bin is no runtime root here, and a name under /usr leading out is not read.
    const bin = { ...plain('/bin/env'), resolved: '/usr/bin/env' };
    expect(explainAccess(narrow, '/bin/env', 'linux', bin)).toMatchObject({ access: 'none' });
    const usrLinkOut = { ...plain('/usr/lib/x'), resolved: '/secret/x' };
    expect(explainAccess(narrow, '/usr/lib/x', 'linux', usrLinkOut)).toMatchObject({
      access: 'none',
      reason: 'outside readable roots (it is /secret/x)',
    });
  });

  it('lets an entry of the policy decide over the runtime reads (a deny under /usr stays denied)', () => {
    const denied = restricted(pathEntry('file:///w', 'write'), pathEntry('file:///usr/share/secret', 'deny'));
    expect(explainAccess(denied, '/usr/share/secret/k', 'linux', plain('/usr/share/secret/k'))).toMatchObject(
      {
        access: 'none',
        entry: 'file:///usr/share/secret:deny',
      },
    );
    const minimal = restricted(special('minimal', 'read'));
    expect(explainAccess(minimal, '/usr/bin/env', 'linux', plain('/usr/bin/env'))).toMatchObject({
      access: 'read',
      entry: 'minimal:read',
    });
  });
});
