import type { z } from 'zod';
import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import { normalizeNativePath, pathStartsWith } from '../native-path.js';
import { nativeToPathUri, pathUriToNative } from '../path-uri.js';
import type { fileSystemEntrySchema, SandboxContextInput } from '../schemas/sandbox-context.js';
import type { V2SandboxPolicy } from './app-server-schemas.js';

/**
 * What a `command/exec` request's `sandboxPolicy` or `permissionProfile` does under
 * `fs-sandbox app-server`: it can only narrow the server's own policy (the one its profile flags
 * set), never widen it. The result is the intersection:
 *
 * - reads stay the server's, and so do its denials (a request cannot lift one);
 * - `readOnly` (`:read-only`) turns every writable root of the server read-only;
 * - `workspaceWrite` (`:workspace`) keeps writable only what both allow: a requested root that lies
 *   (physically, symlinks resolved) inside one of the server's writable roots stays writable as that
 *   physical path, a server root inside a requested one stays writable as it is, and nothing else;
 *   the cwd, `/tmp` and `$TMPDIR` count as requested unless excluded, as in the reference;
 * - the network is enabled only when both enable it;
 * - `dangerFullAccess` and `externalSandbox` ask for no sandbox of ours: the server's policy applies
 *   as it is (the widest a request can get), and a server run with `--require-sandbox` refuses them
 *   outright rather than pretend.
 *
 * Physical paths matter because a bind mount follows symlinks: a requested root `ws/link` whose
 * link points at `/etc` would otherwise make `/etc` writable although the server's root `ws` never
 * made it so.
 */

export interface RequestPolicy {
  sandboxPolicy?: V2SandboxPolicy | null | undefined;
  permissionProfile?: string | null | undefined;
}

export interface NarrowingFacts {
  os: HostOs;
  /** The server's cwd (native): the workspace of a `sandboxPolicy`. */
  serverCwd: string;
  /** The command's cwd (native): the workspace of a `permissionProfile`. */
  commandCwd: string;
  /** `$TMPDIR` as the server sees it, if set. */
  tmpdir: string | null;
  requireSandbox: boolean;
  /** The real path of an existing path (symlinks resolved), or null when it does not exist. */
  realPath(path: string): string | null;
}

/** A policy entry as a context is written (before parsing). */
type FileSystemEntryInput = z.input<ReturnType<typeof fileSystemEntrySchema>>;

/** The built-in profiles a `permissionProfile` may name, as the reference names them. */
const BUILT_IN_PROFILES: Record<string, V2SandboxPolicy> = {
  ':read-only': { type: 'readOnly', networkAccess: false },
  ':workspace': {
    type: 'workspaceWrite',
    writableRoots: [],
    networkAccess: false,
    excludeTmpdirEnvVar: false,
    excludeSlashTmp: false,
  },
  ':danger-full-access': { type: 'dangerFullAccess' },
};

/** The server's context narrowed by the request's policy (or the server's as it is, without one). */
export function narrowContext(
  server: SandboxContextInput,
  request: RequestPolicy,
  facts: NarrowingFacts,
): SandboxContextInput {
  if (request.sandboxPolicy != null && request.permissionProfile != null) {
    throw new FsError('invalid_request', '`permissionProfile` cannot be combined with `sandboxPolicy`');
  }
  const fromProfile = request.permissionProfile != null;
  const policy = fromProfile ? builtInProfile(request.permissionProfile as string) : request.sandboxPolicy;
  if (policy == null) return server;
  if (policy.type === 'dangerFullAccess' || policy.type === 'externalSandbox') {
    if (facts.requireSandbox) {
      throw new FsError(
        'permission_denied',
        `sandboxPolicy ${policy.type} asks for no sandbox, and this server requires one (--require-sandbox)`,
        { kind: 'sandboxRequired' },
      );
    }
    return server;
  }
  const permissions = server.permissions;
  if (permissions.type !== 'managed' || permissions.file_system.type !== 'restricted') {
    throw new FsError('invalid_request', 'this server has no restricted policy to narrow');
  }
  const entries = permissions.file_system.entries;
  const readOnly: FileSystemEntryInput[] = entries.map((entry) =>
    entry.access === 'write' ? { ...entry, access: 'read' } : entry,
  );
  const writable =
    policy.type === 'readOnly'
      ? []
      : intersectWritable(
          serverWritableRoots(entries, facts.os),
          requestedRoots(policy, fromProfile, facts),
          facts,
        );
  const network =
    (permissions.network ?? 'restricted') === 'enabled' && policy.networkAccess ? 'enabled' : 'restricted';
  return {
    ...server,
    permissions: {
      ...permissions,
      network,
      file_system: {
        ...permissions.file_system,
        entries: [
          ...readOnly,
          ...writable.map(
            (path): FileSystemEntryInput => ({
              path: { type: 'path', path: nativeToPathUri(path, facts.os) },
              access: 'write',
            }),
          ),
        ],
      },
    },
  };
}

function builtInProfile(name: string): V2SandboxPolicy {
  const profile = BUILT_IN_PROFILES[name];
  if (profile !== undefined) return profile;
  if (name.startsWith(':')) {
    throw new FsError(
      'invalid_request',
      `invalid permission profile: default_permissions refers to unknown built-in profile \`${name}\``,
    );
  }
  throw new FsError(
    'invalid_request',
    `invalid permission profile: \`${name}\` is not a built-in profile (${Object.keys(BUILT_IN_PROFILES).join(', ')}), and this server has no [permissions] table`,
  );
}

/** The server's writable roots as native paths; only plain path entries can be intersected. */
function serverWritableRoots(entries: readonly FileSystemEntryInput[], os: HostOs): string[] {
  return entries.flatMap((entry) =>
    entry.access === 'write' && entry.path.type === 'path' ? [pathUriToNative(entry.path.path, os)] : [],
  );
}

function requestedRoots(
  policy: Extract<V2SandboxPolicy, { type: 'workspaceWrite' }>,
  fromProfile: boolean,
  facts: NarrowingFacts,
): string[] {
  const roots = [fromProfile ? facts.commandCwd : facts.serverCwd, ...policy.writableRoots];
  if (!policy.excludeSlashTmp && facts.os !== 'windows') roots.push('/tmp');
  if (!policy.excludeTmpdirEnvVar && facts.tmpdir !== null) {
    const tmpdir = normalizeNativePath(facts.os, facts.tmpdir);
    if (tmpdir !== null) roots.push(tmpdir);
  }
  return roots;
}

/** Physical paths writable under both: each pair of roots contributes the inner one, if nested. */
function intersectWritable(server: string[], requested: string[], facts: NarrowingFacts): string[] {
  const result = new Set<string>();
  for (const serverRoot of server) {
    const serverReal = facts.realPath(serverRoot);
    if (serverReal === null) continue;
    for (const root of requested) {
      const real = facts.realPath(root);
      if (real === null) continue;
      if (pathStartsWith(facts.os, real, serverReal)) result.add(real);
      else if (pathStartsWith(facts.os, serverReal, real)) result.add(serverReal);
    }
  }
  return [...result];
}
