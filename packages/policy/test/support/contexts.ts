import type {
  FileSystemEntry,
  RestrictedProfile,
  SandboxContext,
} from '../../src/schemas/sandbox-context.js';

/** Small builders so each test reads as the policy it exercises. */
export const pathEntry = (uri: string, access: FileSystemEntry['access']): FileSystemEntry => ({
  path: { type: 'path', path: uri },
  access,
});

export const special = (
  kind: 'root' | 'minimal' | 'tmpdir' | 'slash_tmp',
  access: FileSystemEntry['access'],
): FileSystemEntry => ({ path: { type: 'special', value: { kind } }, access });

export const projectRoots = (
  access: FileSystemEntry['access'],
  subpath: string | null = null,
): FileSystemEntry => ({
  path: { type: 'special', value: { kind: 'project_roots', subpath } },
  access,
});

export const glob = (pattern: string, access: FileSystemEntry['access'] = 'deny'): FileSystemEntry => ({
  path: { type: 'glob_pattern', pattern },
  access,
});

export const unknownSpecial = (access: FileSystemEntry['access']): FileSystemEntry => ({
  path: { type: 'special', value: { kind: 'unknown', raw: { kind: 'home' } } },
  access,
});

export function restricted(...entries: FileSystemEntry[]): RestrictedProfile {
  return { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' };
}

export function context(
  profile: SandboxContext['permissions'],
  extra: Partial<SandboxContext> = {},
): SandboxContext {
  return { permissions: profile, windowsSandboxLevel: 'disabled', ...extra };
}
