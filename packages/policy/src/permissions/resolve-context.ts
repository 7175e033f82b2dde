import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import { joinPath, normalizeNativePath, separatorFor } from '../native-path.js';
import { nativeToPathUri, pathUriToNative } from '../path-uri.js';
import {
  type FileSystemEntry,
  isRestrictedProfile,
  type PermissionProfile,
  type RestrictedProfile,
  type SandboxBackendName,
  type SandboxContext,
  type WindowsSandboxLevel,
} from '../schemas/sandbox-context.js';
import { hasCwdDependentPermissions } from './cwd-dependence.js';
import { executableSurface, type SurfaceEntry } from './executable-surface.js';
import { hasFullDiskWrite } from './full-disk.js';
import { isAbsoluteGlob, parseDenyGlob } from './glob-match.js';

export type UnsandboxedReason = 'absent' | 'disabled' | 'external' | 'unrestricted' | 'full_disk_write';

export type ResolvedContext =
  | { sandboxed: false; reason: UnsandboxedReason }
  | {
      sandboxed: true;
      /** managed + restricted, with `project_roots`, `tmpdir` and relative globs materialised. */
      profile: PermissionProfile;
      /** Native sandbox cwd, when the context has one. */
      cwd: string | null;
      /** Native workspace roots. */
      workspaceRoots: string[];
      windowsSandboxLevel: WindowsSandboxLevel;
      /** The backend the context requires (`requireBackend`), or null for any. */
      requireBackend: SandboxBackendName | null;
      /** The executable surface protected below every writable root: the fixed entries and the policy's. */
      surface: SurfaceEntry[];
      /** Native directories in or below which a command may leave a new git repository. */
      nestedRepositories: string[];
    };

/** A context that needs the platform sandbox. */
export type SandboxedContext = Extract<ResolvedContext, { sandboxed: true }>;

export interface ResolveOptions {
  /**
   * Native absolute temp directory the `tmpdir` special stands for (the broker passes its own
   * TMPDIR). Policy stays pure: it never reads the environment itself. When absent the context's
   * first `temporaryDirectories` entry is used; with neither, `tmpdir` entries vanish (fail closed).
   */
  tmpdir?: string | null;
}

const CWD_REQUIRED_MESSAGE = 'file system sandbox context with dynamic permissions requires cwd';

/**
 * Decides whether a context needs the platform sandbox and, if so, turns it into a self-contained
 * profile. Every URI is converted here, so a non-native path fails now with `'<uri>' is invalid on
 * '<os>'` instead of being skipped later (a skipped deny entry would widen access).
 */
export function resolveSandboxContext(
  context: SandboxContext | null | undefined,
  os: HostOs,
  options: ResolveOptions = {},
): ResolvedContext {
  if (!context) return { sandboxed: false, reason: 'absent' };
  const profile = context.permissions;
  if (profile.type === 'disabled') return { sandboxed: false, reason: 'disabled' };
  if (profile.type === 'external') return { sandboxed: false, reason: 'external' };
  if (!isRestrictedProfile(profile)) return { sandboxed: false, reason: 'unrestricted' };

  const cwd = context.cwd ? pathUriToNative(context.cwd, os) : null;
  const workspaceRoots = (context.workspaceRoots ?? []).map((uri) => pathUriToNative(uri, os));
  for (const entry of profile.file_system.entries) {
    if (entry.path.type === 'path') pathUriToNative(entry.path.path, os);
    // Refused as spelled, before a relative one is joined to cwd: every backend and the pre-check
    // then work from patterns that can be enforced.
    if (entry.path.type === 'glob_pattern') parseDenyGlob(entry.path.pattern, os);
  }
  if (cwd === null && hasCwdDependentPermissions(profile))
    throw new FsError('invalid_params', CWD_REQUIRED_MESSAGE);
  if (hasFullDiskWrite(profile)) return { sandboxed: false, reason: 'full_disk_write' };

  const tmpdir = resolveTmpdir(context, os, options);
  const entries = profile.file_system.entries.flatMap((entry) =>
    materialise(entry, { os, cwd, workspaceRoots, tmpdir }),
  );
  const resolved: RestrictedProfile = { ...profile, file_system: { ...profile.file_system, entries } };
  return {
    sandboxed: true,
    profile: resolved,
    cwd,
    workspaceRoots,
    windowsSandboxLevel: context.windowsSandboxLevel,
    requireBackend: context.requireBackend ?? null,
    surface: executableSurface(context.executableSurface?.protect ?? []),
    nestedRepositories: (context.executableSurface?.allowNestedRepositories ?? []).map((uri) =>
      pathUriToNative(uri, os),
    ),
  };
}

function resolveTmpdir(context: SandboxContext, os: HostOs, options: ResolveOptions): string | null {
  if (options.tmpdir) {
    const normalized = normalizeNativePath(os, options.tmpdir);
    if (normalized === null) {
      throw new FsError('invalid_params', `tmpdir '${options.tmpdir}' is not an absolute path on '${os}'`);
    }
    return normalized;
  }
  const first = context.temporaryDirectories?.[0];
  return first ? pathUriToNative(first, os) : null;
}

interface Materialisation {
  os: HostOs;
  cwd: string | null;
  workspaceRoots: string[];
  tmpdir: string | null;
}

function pathEntry(native: string, access: FileSystemEntry['access'], os: HostOs): FileSystemEntry {
  return { path: { type: 'path', path: nativeToPathUri(native, os) }, access };
}

function materialise(entry: FileSystemEntry, m: Materialisation): FileSystemEntry[] {
  const path = entry.path;
  if (path.type === 'special' && path.value.kind === 'project_roots') {
    const { subpath } = path.value;
    // One entry per workspace root; none at all when there are no workspace roots (fail closed).
    return m.workspaceRoots.map((root) =>
      pathEntry(subpath ? joinPath(m.os, root, subpath) : root, entry.access, m.os),
    );
  }
  if (path.type === 'special' && path.value.kind === 'tmpdir') {
    return m.tmpdir ? [pathEntry(m.tmpdir, entry.access, m.os)] : [];
  }
  if (path.type === 'glob_pattern' && !isAbsoluteGlob(path.pattern) && m.cwd !== null) {
    const separator = separatorFor(m.os);
    const base = m.cwd.endsWith(separator) ? m.cwd : `${m.cwd}${separator}`;
    return [{ ...entry, path: { type: 'glob_pattern', pattern: `${base}${path.pattern}` } }];
  }
  return [entry];
}
