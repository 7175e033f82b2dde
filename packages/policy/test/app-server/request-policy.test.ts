import { describe, expect, it } from 'vitest';
import { type NarrowingFacts, narrowContext } from '../../src/app-server/request-policy.js';
import type { SandboxContextInput } from '../../src/schemas/sandbox-context.js';

/** A server policy as `fs-sandbox app-server --cwd /w --deny /w/secret` writes it. */
const SERVER: SandboxContextInput = {
  permissions: {
    type: 'managed',
    network: 'restricted',
    file_system: {
      type: 'restricted',
      entries: [
        { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
        { path: { type: 'path', path: 'file:///w' }, access: 'write' },
        { path: { type: 'path', path: 'file:///w/secret' }, access: 'deny' },
      ],
    },
  },
  cwd: 'file:///w',
  workspaceRoots: ['file:///w'],
};

/** Real paths of this fake host: /w/link points at /etc, /w/sub and /tmp exist. */
const REAL: Record<string, string> = {
  '/w': '/w',
  '/w/sub': '/w/sub',
  '/w/link': '/etc',
  '/tmp': '/tmp',
  '/etc': '/etc',
};

const facts = (overrides: Partial<NarrowingFacts> = {}): NarrowingFacts => ({
  os: 'linux',
  serverCwd: '/w',
  commandCwd: '/w/sub',
  tmpdir: null,
  requireSandbox: false,
  realPath: (path) => REAL[path] ?? null,
  ...overrides,
});

function entriesOf(context: SandboxContextInput): Array<[string, string]> {
  if (context.permissions.type !== 'managed' || context.permissions.file_system.type !== 'restricted')
    return [];
  return context.permissions.file_system.entries.map((entry) => [
    entry.path.type === 'path' ? entry.path.path : entry.path.type,
    String(entry.access),
  ]);
}

const workspaceWrite = (writableRoots: string[], extra: Record<string, boolean> = {}) => ({
  sandboxPolicy: {
    type: 'workspaceWrite' as const,
    writableRoots,
    networkAccess: false,
    excludeTmpdirEnvVar: false,
    excludeSlashTmp: true,
    ...extra,
  },
});

describe('narrowContext: a request can only narrow the server policy', () => {
  it('keeps the server policy when the request names none', () => {
    expect(narrowContext(SERVER, {}, facts())).toBe(SERVER);
  });

  it('readOnly turns every writable root read-only and keeps the denials', () => {
    const narrowed = narrowContext(
      SERVER,
      { sandboxPolicy: { type: 'readOnly', networkAccess: true } },
      facts(),
    );
    expect(entriesOf(narrowed)).toEqual([
      ['special', 'read'],
      ['file:///w', 'read'],
      ['file:///w/secret', 'deny'],
    ]);
    // The server gives no network, so the request's networkAccess cannot.
    expect(narrowed.permissions).toMatchObject({ network: 'restricted' });
  });

  it('workspaceWrite keeps writable only what lies inside a server root, by its physical path', () => {
    const narrowed = narrowContext(SERVER, workspaceWrite(['/w/sub', '/etc', '/w/link', '/tmp']), facts());
    const writable = entriesOf(narrowed).filter(([, access]) => access === 'write');
    // The cwd (/w) and /w/sub stay; /etc, the link to it and /tmp were never writable here.
    expect(writable).toEqual([
      ['file:///w', 'write'],
      ['file:///w/sub', 'write'],
    ]);
  });

  it('a permissionProfile of :workspace has the command cwd as its workspace', () => {
    const narrowed = narrowContext(
      SERVER,
      { permissionProfile: ':workspace' },
      facts({ commandCwd: '/w/sub' }),
    );
    const writable = entriesOf(narrowed).filter(([, access]) => access === 'write');
    expect(writable).toEqual([['file:///w/sub', 'write']]);
  });

  it('dangerFullAccess and externalSandbox get the server policy, or a refusal with --require-sandbox', () => {
    for (const type of ['dangerFullAccess', 'externalSandbox'] as const) {
      const sandboxPolicy =
        type === 'dangerFullAccess' ? { type } : { type, networkAccess: 'enabled' as const };
      expect(narrowContext(SERVER, { sandboxPolicy }, facts())).toBe(SERVER);
      expect(() => narrowContext(SERVER, { sandboxPolicy }, facts({ requireSandbox: true }))).toThrow(
        /requires one \(--require-sandbox\)/,
      );
    }
    expect(() =>
      narrowContext(SERVER, { permissionProfile: ':danger-full-access' }, facts({ requireSandbox: true })),
    ).toThrow(/--require-sandbox/);
  });

  it('refuses an unknown profile and a request naming both', () => {
    expect(() => narrowContext(SERVER, { permissionProfile: ':nope' }, facts())).toThrow(
      'invalid permission profile: default_permissions refers to unknown built-in profile `:nope`',
    );
    expect(() => narrowContext(SERVER, { permissionProfile: 'mine' }, facts())).toThrow(
      /invalid permission profile/,
    );
    expect(() =>
      narrowContext(
        SERVER,
        { permissionProfile: ':read-only', sandboxPolicy: { type: 'dangerFullAccess' } },
        facts(),
      ),
    ).toThrow('`permissionProfile` cannot be combined with `sandboxPolicy`');
  });
});
