import { describe, expect, it } from 'vitest';
import type { HostOs } from '../src/host-os.js';
import { resolveSandboxContext } from '../src/permissions/resolve-context.js';
import { rootOnlySecrets } from '../src/platform-roots.js';
import { buildSandboxPlan } from '../src/sandbox-plan-builder.js';
import type { PermissionProfile, SandboxContext } from '../src/schemas/sandbox-context.js';
import { type HelperRuntimeReads, widenForHelperRuntime } from '../src/widening.js';
import { context, glob, pathEntry, projectRoots, restricted, special } from './support/contexts.js';

const PROTECTED = ['.git', '.agents', '.codex', 'fs-sandbox.toml'];
/** A whole-disk read shows everything but the host's root-only secrets (platform-roots.ts), each masked. */
const SECRETS_MASKED = rootOnlySecrets('linux')
  .map((secret) => secret.path)
  .sort();
const linuxRuntime: HelperRuntimeReads = {
  os: 'linux',
  helperFiles: ['/opt/node/bin/node', '/opt/app/dist/helper.cjs'],
  minimalRootsPresent: ['/usr', '/etc', '/lib'],
};

/** The broker's pipeline: resolve, widen for the helper, plan. */
function plan(ctx: SandboxContext, os: HostOs = 'linux', runtime: HelperRuntimeReads = linuxRuntime) {
  const resolved = resolveSandboxContext(ctx, os);
  if (!resolved.sandboxed) throw new Error(`expected a sandboxed context, got ${resolved.reason}`);
  const profile = widenForHelperRuntime(resolved.profile, runtime);
  return buildSandboxPlan({ ...resolved, profile }, os);
}

const planOf = (profile: PermissionProfile, extra: Partial<SandboxContext> = {}) =>
  plan(context(profile, extra));

describe('buildSandboxPlan', () => {
  it('read-only: the whole disk read-only but the root-only secrets, nothing else', () => {
    expect(planOf(restricted(special('root', 'read')), { cwd: 'file:///w' })).toEqual({
      os: 'linux',
      fullDiskRead: false,
      readableRoots: ['/'],
      writableRoots: [],
      deniedPaths: SECRETS_MASKED,
      denyGlobs: [],
      cwd: '/w',
    });
  });
  it('workspace write with a deny: root stays readable but not as full-disk read', () => {
    const profile = restricted(
      special('root', 'read'),
      pathEntry('file:///w', 'write'),
      pathEntry('file:///w/.env', 'deny'),
    );
    expect(planOf(profile)).toEqual({
      os: 'linux',
      fullDiskRead: false,
      readableRoots: ['/'],
      writableRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: PROTECTED }],
      deniedPaths: [...SECRETS_MASKED, '/w/.env'],
      denyGlobs: [],
      cwd: null,
    });
  });
  it('reference RO/WW shape: readable roots include the runtime roots (not /etc) and exact helper files, sorted', () => {
    const profile = restricted(pathEntry('file:///srv/ro', 'read'), pathEntry('file:///srv/rw', 'write'));
    expect(planOf(profile)).toEqual({
      os: 'linux',
      fullDiskRead: false,
      readableRoots: ['/lib', '/opt/app/dist/helper.cjs', '/opt/node/bin/node', '/srv/ro', '/usr'],
      writableRoots: [{ root: '/srv/rw', readOnlySubpaths: [], protectedNames: PROTECTED }],
      deniedPaths: [],
      denyGlobs: [],
      cwd: null,
    });
  });
  it('nests read-only subpaths under the deepest writable root and honours explicit grants', () => {
    const profile = restricted(
      pathEntry('file:///w', 'write'),
      pathEntry('file:///w/docs', 'read'),
      pathEntry('file:///w/docs/drafts', 'write'),
      pathEntry('file:///w/docs/drafts/final', 'read'),
      pathEntry('file:///w/docs/drafts/final/notes', 'read'),
      pathEntry('file:///w/.git', 'write'),
      pathEntry('file:///w-x', 'write'),
    );
    expect(planOf(profile).writableRoots).toEqual([
      { root: '/w', readOnlySubpaths: ['/w/docs'], protectedNames: PROTECTED },
      { root: '/w/.git', readOnlySubpaths: [], protectedNames: [] },
      { root: '/w/docs/drafts', readOnlySubpaths: ['/w/docs/drafts/final'], protectedNames: PROTECTED },
      { root: '/w-x', readOnlySubpaths: [], protectedNames: PROTECTED },
    ]);
  });
  it('leaves out redundant roots and denials that change nothing', () => {
    const profile = restricted(
      pathEntry('file:///ro', 'read'),
      pathEntry('file:///ro/sub', 'read'),
      pathEntry('file:///ro/secret', 'deny'),
      pathEntry('file:///elsewhere', 'deny'),
      pathEntry('file:///usr/lib', 'read'),
    );
    const result = planOf(profile);
    expect(result.readableRoots).toEqual([
      '/lib',
      '/opt/app/dist/helper.cjs',
      '/opt/node/bin/node',
      '/ro',
      '/usr',
    ]);
    expect(result.deniedPaths).toEqual(['/ro/secret']);
    // Kept apart: a symlink may show it under a granted name, which only the backend can see.
    expect(result.unshownDeniedPaths).toEqual(['/elsewhere']);
  });
  it('keeps read entries outside every writable root apart when nothing else carries them', () => {
    // A symlink may give them a real name inside a writable root, which only the backend can see.
    const withRoot = planOf(
      restricted(
        special('root', 'read'),
        pathEntry('file:///r/p', 'write'),
        pathEntry('file:///l/p/docs', 'read'),
        pathEntry('file:///r/p/ro', 'read'),
      ),
    );
    expect(withRoot.readableRoots).toEqual(['/']);
    expect(withRoot.unshownReadOnlyPaths).toEqual(['/l/p/docs']);
    const narrow = planOf(
      restricted(
        pathEntry('file:///r/p', 'write'),
        pathEntry('file:///l', 'read'),
        pathEntry('file:///l/p/docs', 'read'),
      ),
    );
    expect(narrow.readableRoots).toContain('/l');
    expect(narrow.unshownReadOnlyPaths).toEqual(['/l/p/docs']);
    // Without a writable root no other spelling can be written.
    expect(
      planOf(restricted(special('root', 'read'), pathEntry('file:///l/p/docs', 'read'))).unshownReadOnlyPaths,
    ).toBeUndefined();
  });
  it('keeps a readable root below an explicit deny', () => {
    const result = planOf(restricted(pathEntry('file:///d', 'deny'), pathEntry('file:///d/r', 'read')));
    expect(result.readableRoots).toContain('/d/r');
    expect(result.deniedPaths).toEqual([]);
  });
  it('drops a root whose tie resolves to deny', () => {
    const result = planOf(restricted(pathEntry('file:///w', 'write'), pathEntry('file:///w', 'deny')));
    expect(result.writableRoots).toEqual([]);
    expect(result.readableRoots).not.toContain('/w');
  });
  it('expresses a narrowed root:write as a writable `/` with read-only parts', () => {
    const result = planOf(restricted(special('root', 'write'), pathEntry('file:///etc', 'read')));
    expect(result.fullDiskRead).toBe(true);
    expect(result.writableRoots).toEqual([
      { root: '/', readOnlySubpaths: ['/etc'], protectedNames: PROTECTED },
    ]);
  });
  it('collects deny globs, resolving relative ones against cwd', () => {
    const profile = restricted(
      special('root', 'read'),
      pathEntry('file:///w', 'write'),
      glob('**/*.pem'),
      glob('/w/**/.env'),
      glob('/w/**/.env'),
    );
    const result = planOf(profile, { cwd: 'file:///w' });
    expect(result.denyGlobs).toEqual(['/w/**/*.pem', '/w/**/.env']);
    expect(result.fullDiskRead).toBe(false);
    expect(result.cwd).toBe('/w');
  });
  it('materialises project_roots before planning', () => {
    const result = planOf(restricted(special('root', 'read'), projectRoots('write')), {
      cwd: 'file:///a',
      workspaceRoots: ['file:///b', 'file:///a'],
    });
    expect(result.writableRoots.map((w) => w.root)).toEqual(['/a', '/b']);
  });
  it('is independent of entry order', () => {
    const entries = [
      special('root', 'read'),
      pathEntry('file:///w', 'write'),
      pathEntry('file:///w/.env', 'deny'),
      pathEntry('file:///w/vendor', 'read'),
      pathEntry('file:///v', 'write'),
      glob('/w/**/*.key'),
    ];
    const forward = planOf(restricted(...entries));
    expect(planOf(restricted(...[...entries].reverse()))).toEqual(forward);
    expect(planOf(restricted(...entries.slice(3), ...entries.slice(0, 3)))).toEqual(forward);
  });
  it('refuses an unwidened profile that still names `minimal`', () => {
    const resolved = resolveSandboxContext(context(restricted(special('minimal', 'read'))), 'linux');
    if (!resolved.sandboxed) throw new Error('expected sandboxed');
    expect(() => buildSandboxPlan(resolved, 'linux')).toThrow(
      expect.objectContaining({ kind: 'internal_error' }),
    );
  });
  it('plans Windows policies with Windows paths', () => {
    const windowsRuntime = {
      os: 'windows' as const,
      helperFiles: ['C:\\Program Files\\nodejs\\node.exe', 'C:\\app\\helper.cjs'],
      minimalRootsPresent: ['C:\\Windows', 'C:\\Program Files'],
    };
    const result = plan(
      context(restricted(pathEntry('file:///C:/w', 'write'), pathEntry('file:///C:/w/ro', 'read')), {
        cwd: 'file:///C:/w',
      }),
      'windows',
      windowsRuntime,
    );
    expect(result).toEqual({
      os: 'windows',
      fullDiskRead: false,
      readableRoots: ['C:\\app\\helper.cjs', 'C:\\Program Files', 'C:\\Windows'],
      writableRoots: [{ root: 'C:\\w', readOnlySubpaths: ['C:\\w\\ro'], protectedNames: PROTECTED }],
      deniedPaths: [],
      denyGlobs: [],
      cwd: 'C:\\w',
    });
  });
  it('refuses a narrowed root entry on Windows, where it has no single root to mount', () => {
    const windowsRuntime = { os: 'windows' as const, helperFiles: [], minimalRootsPresent: [] };
    const ctx = context(restricted(special('root', 'read'), pathEntry('file:///C:/w/.env', 'deny')));
    expect(() => plan(ctx, 'windows', windowsRuntime)).toThrow(
      expect.objectContaining({ kind: 'sandbox_unavailable' }),
    );
    expect(plan(context(restricted(special('root', 'read'))), 'windows', windowsRuntime).fullDiskRead).toBe(
      true,
    );
  });
});
