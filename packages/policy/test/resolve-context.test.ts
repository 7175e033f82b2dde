import { describe, expect, it } from 'vitest';
import { hasCwdDependentPermissions } from '../src/permissions/cwd-dependence.js';
import { EXECUTABLE_SURFACE } from '../src/permissions/executable-surface.js';
import { hasFullDiskRead, hasFullDiskWrite } from '../src/permissions/full-disk.js';
import { readOnlyProfile, workspaceWriteProfile } from '../src/permissions/profiles.js';
import { resolveSandboxContext } from '../src/permissions/resolve-context.js';
import { sandboxContextSchema } from '../src/schemas/sandbox-context.js';
import {
  context,
  glob,
  pathEntry,
  projectRoots,
  restricted,
  special,
  unknownSpecial,
} from './support/contexts.js';
import { thrownFsError } from './support/thrown.js';

const failure = thrownFsError;

function sandboxedEntries(result: ReturnType<typeof resolveSandboxContext>): unknown[] {
  if (
    !result.sandboxed ||
    result.profile.type !== 'managed' ||
    result.profile.file_system.type !== 'restricted'
  ) {
    throw new Error('expected a sandboxed restricted result');
  }
  return result.profile.file_system.entries;
}

describe('resolveSandboxContext routing', () => {
  it.each([
    ['absent', undefined],
    ['absent', null],
    ['disabled', context({ type: 'disabled' })],
    ['external', context({ type: 'external' })],
    [
      'unrestricted',
      context({ type: 'managed', file_system: { type: 'unrestricted' }, network: 'restricted' }),
    ],
    ['full_disk_write', context(restricted(special('root', 'write')))],
    ['full_disk_write', context(restricted(special('root', 'write'), pathEntry('file:///w', 'write')))],
  ])('%s needs no sandbox', (reason, ctx) => {
    expect(resolveSandboxContext(ctx, 'linux')).toEqual({ sandboxed: false, reason });
  });
  it.each([
    ['root:read', restricted(special('root', 'read'))],
    ['no entries', restricted()],
    [
      'root:write narrowed by a deny',
      restricted(special('root', 'write'), pathEntry('file:///w/.env', 'deny')),
    ],
    ['root:write narrowed by a read', restricted(special('root', 'write'), pathEntry('file:///etc', 'read'))],
    ['root:write narrowed by a deny glob', restricted(special('root', 'write'), glob('/**/*.pem'))],
    ['root:write with an unknown kind', restricted(special('root', 'write'), unknownSpecial('write'))],
  ])('%s needs the sandbox', (_name, profile) => {
    expect(resolveSandboxContext(context(profile), 'linux').sandboxed).toBe(true);
  });
  it('keeps a narrowing project_roots entry even when it resolves to nothing (fail closed)', () => {
    const ctx = context(restricted(special('root', 'write'), projectRoots('read')), { cwd: 'file:///w' });
    const result = resolveSandboxContext(ctx, 'linux');
    expect(result.sandboxed).toBe(true);
    expect(sandboxedEntries(result)).toEqual([special('root', 'write')]);
  });
  it('carries cwd, workspace roots and the Windows level as native values', () => {
    const ctx = context(restricted(pathEntry('file:///w', 'write')), {
      cwd: 'file:///w/sub',
      workspaceRoots: ['file:///w'],
      windowsSandboxLevel: 'restricted-token',
    });
    expect(resolveSandboxContext(ctx, 'linux')).toEqual({
      sandboxed: true,
      profile: restricted(pathEntry('file:///w', 'write')),
      cwd: '/w/sub',
      workspaceRoots: ['/w'],
      windowsSandboxLevel: 'restricted-token',
      requireBackend: null,
      surface: [...EXECUTABLE_SURFACE],
      nestedRepositories: [],
    });
  });

  it("carries the policy's additions to the executable surface and its nested-repository directories", () => {
    const ctx = context(restricted(pathEntry('file:///w', 'write')), {
      executableSurface: { protect: ['.envrc', '.git'], allowNestedRepositories: ['file:///w/vendor'] },
    });
    const resolved = resolveSandboxContext(ctx, 'linux');
    expect(resolved).toMatchObject({
      surface: [...EXECUTABLE_SURFACE, { path: '.envrc', reason: 'protected by the policy' }],
      nestedRepositories: ['/w/vendor'],
    });
    const parses = (executableSurface: unknown) =>
      sandboxContextSchema().safeParse({ ...context(restricted()), executableSurface }).success;
    expect(parses({ protect: ['.vscode/tasks.json'] })).toBe(true);
    for (const protect of [['../x'], ['/abs'], ['a//b'], ['a\\b'], [''], ['./x']]) {
      expect(parses({ protect })).toBe(false);
    }
    // Strict: a misspelled key would protect less than the policy says.
    expect(parses({ protects: ['.envrc'] })).toBe(false);
  });
});

describe('project_roots materialisation', () => {
  const base = (workspaceRoots: string[], entry = projectRoots('write')) =>
    context(restricted(special('root', 'read'), entry), { cwd: 'file:///w1', workspaceRoots });
  it('vanishes with no workspace roots', () => {
    expect(sandboxedEntries(resolveSandboxContext(base([]), 'linux'))).toEqual([special('root', 'read')]);
  });
  it('becomes one entry for one workspace root', () => {
    expect(sandboxedEntries(resolveSandboxContext(base(['file:///w1']), 'linux'))).toEqual([
      special('root', 'read'),
      pathEntry('file:///w1', 'write'),
    ]);
  });
  it('becomes one entry per workspace root, subpath joined', () => {
    const ctx = base(['file:///w1', 'file:///w%202'], projectRoots('deny', 'secrets/keys'));
    expect(sandboxedEntries(resolveSandboxContext(ctx, 'linux'))).toEqual([
      special('root', 'read'),
      pathEntry('file:///w1/secrets/keys', 'deny'),
      pathEntry('file:///w%202/secrets/keys', 'deny'),
    ]);
  });
  it('works with Windows workspace roots on windows', () => {
    const ctx = context(restricted(projectRoots('write')), {
      cwd: 'file:///C:/w',
      workspaceRoots: ['file:///C:/w', 'file://srv/share/w'],
    });
    expect(sandboxedEntries(resolveSandboxContext(ctx, 'windows'))).toEqual([
      pathEntry('file:///C:/w', 'write'),
      pathEntry('file://srv/share/w', 'write'),
    ]);
  });
});

describe('cwd requirements and non-native paths', () => {
  it('requires cwd for project_roots with the reference message', () => {
    const e = failure(() =>
      resolveSandboxContext(
        context(restricted(projectRoots('write')), { workspaceRoots: ['file:///w'] }),
        'linux',
      ),
    );
    expect([e.kind, e.message]).toEqual([
      'invalid_params',
      'file system sandbox context with dynamic permissions requires cwd',
    ]);
    expect(() => resolveSandboxContext(context(restricted(projectRoots('write'))), 'linux')).toThrow(
      'file system sandbox context with dynamic permissions requires cwd',
    );
  });
  it('requires cwd for a relative glob and resolves it against cwd', () => {
    const profile = restricted(special('root', 'read'), glob('**/*.env'), glob('keys/*'));
    expect(failure(() => resolveSandboxContext(context(profile), 'linux')).message).toBe(
      'file system sandbox context with dynamic permissions requires cwd',
    );
    expect(sandboxedEntries(resolveSandboxContext(context(profile, { cwd: 'file:///w' }), 'linux'))).toEqual([
      special('root', 'read'),
      glob('/w/**/*.env'),
      glob('/w/keys/*'),
    ]);
    expect(
      sandboxedEntries(
        resolveSandboxContext(context(restricted(glob('*.pem')), { cwd: 'file:///' }), 'linux'),
      ),
    ).toEqual([glob('/*.pem')]);
  });
  it('refuses an unenforceable glob as spelled, before joining it to cwd', () => {
    const e = failure(() =>
      resolveSandboxContext(context(restricted(glob('../secrets/*')), { cwd: 'file:///w' }), 'linux'),
    );
    expect([e.kind, e.message]).toEqual([
      'invalid_params',
      'deny glob `../secrets/*` cannot be enforced: it has a `..` segment, which never matches a normalised path (spell the path without it)',
    ]);
    expect(
      failure(() => resolveSandboxContext(context(restricted(glob('/w/keys/', 'read'))), 'linux')).kind,
    ).toBe('invalid_params');
  });
  it('refuses a non-native cwd, entry or workspace root', () => {
    const profile = restricted(pathEntry('file:///w', 'write'));
    expect(
      failure(() => resolveSandboxContext(context(profile, { cwd: 'file:///C:/w' }), 'linux')).message,
    ).toBe("'file:///C:/w' is invalid on 'linux'");
    expect(
      failure(() => resolveSandboxContext(context(restricted(pathEntry('file:///D:/x', 'deny'))), 'macos'))
        .message,
    ).toBe("'file:///D:/x' is invalid on 'macos'");
    expect(
      failure(() =>
        resolveSandboxContext(context(profile, { workspaceRoots: ['file://srv/share'] }), 'linux'),
      ).message,
    ).toBe("'file://srv/share' is invalid on 'linux'");
    expect(failure(() => resolveSandboxContext(context(profile), 'windows')).message).toBe(
      "'file:///w' is invalid on 'windows'",
    );
  });
});

describe('tmpdir and slash_tmp', () => {
  const profile = restricted(
    special('root', 'read'),
    special('tmpdir', 'write'),
    special('slash_tmp', 'write'),
  );
  it('takes tmpdir from the explicit option first', () => {
    const ctx = context(profile, { temporaryDirectories: ['file:///ctx-tmp'] });
    expect(sandboxedEntries(resolveSandboxContext(ctx, 'linux', { tmpdir: '/run/tmp/' }))).toEqual([
      special('root', 'read'),
      pathEntry('file:///run/tmp', 'write'),
      special('slash_tmp', 'write'),
    ]);
  });
  it('falls back to the context temporary directories', () => {
    const ctx = context(profile, { temporaryDirectories: ['file:///ctx-tmp'] });
    expect(sandboxedEntries(resolveSandboxContext(ctx, 'linux'))).toContainEqual(
      pathEntry('file:///ctx-tmp', 'write'),
    );
  });
  it('drops tmpdir when nothing names it', () => {
    expect(sandboxedEntries(resolveSandboxContext(context(profile), 'linux'))).toEqual([
      special('root', 'read'),
      special('slash_tmp', 'write'),
    ]);
  });
  it('refuses a relative tmpdir option', () => {
    expect(failure(() => resolveSandboxContext(context(profile), 'linux', { tmpdir: 'tmp' })).kind).toBe(
      'invalid_params',
    );
  });
});

describe('full-disk predicates', () => {
  it('full-disk read needs root read (or write) and no deny at all', () => {
    expect(hasFullDiskRead(restricted(special('root', 'read')))).toBe(true);
    expect(hasFullDiskRead(restricted(special('root', 'write'), pathEntry('file:///etc', 'read')))).toBe(
      true,
    );
    expect(hasFullDiskRead(restricted(special('root', 'read'), pathEntry('file:///w/.env', 'deny')))).toBe(
      false,
    );
    expect(hasFullDiskRead(restricted(special('root', 'read'), glob('/**/*.pem')))).toBe(false);
    expect(hasFullDiskRead(restricted(pathEntry('file:///', 'read')))).toBe(false);
    expect(hasFullDiskRead({ type: 'disabled' })).toBe(true);
  });
  it('full-disk write needs root write and only write entries', () => {
    expect(hasFullDiskWrite(restricted(special('root', 'write')))).toBe(true);
    expect(hasFullDiskWrite(restricted(special('root', 'read')))).toBe(false);
    expect(hasFullDiskWrite(restricted(special('root', 'write'), special('root', 'read')))).toBe(false);
    expect(hasFullDiskWrite(restricted(special('root', 'write'), unknownSpecial('write')))).toBe(false);
    expect(hasFullDiskWrite(restricted(special('root', 'write'), projectRoots('deny')))).toBe(false);
  });
});

describe('cwd dependence', () => {
  it('detects project_roots and relative globs only', () => {
    expect(hasCwdDependentPermissions(restricted(projectRoots('read')))).toBe(true);
    expect(hasCwdDependentPermissions(restricted(glob('*.env')))).toBe(true);
    expect(hasCwdDependentPermissions(restricted(glob('/w/*.env'), glob('C:\\w\\*.env')))).toBe(false);
    expect(hasCwdDependentPermissions(restricted(pathEntry('file:///w', 'write')))).toBe(false);
    expect(hasCwdDependentPermissions({ type: 'disabled' })).toBe(false);
  });
});

describe('profile builders', () => {
  it('builds read-only and workspace-write profiles', () => {
    expect(readOnlyProfile()).toEqual(restricted(special('root', 'read')));
    expect(
      workspaceWriteProfile({ writableRoots: ['file://localhost/w'], deny: ['file:///w/.env'] }),
    ).toEqual(
      restricted(
        special('root', 'read'),
        pathEntry('file:///w', 'write'),
        pathEntry('file:///w/.env', 'deny'),
      ),
    );
    expect(() => workspaceWriteProfile({ writableRoots: ['/w'] })).toThrow(
      'invalid URI: relative URL without a base',
    );
  });
});
