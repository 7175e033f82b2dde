import { resolve } from 'node:path';
import {
  type ExecutableSurfacePolicy,
  type FileSystemEntry,
  type HostOs,
  nativeToPathUri,
  pathStartsWith,
  type SandboxContextInput,
  workspaceWriteProfile,
} from '@fs-sandbox/policy';
import { GLOB_CHARACTERS } from '../cli/context-options.js';

export interface McpSandboxOptions {
  /** Absolute native directories (at least one). */
  directories: readonly string[];
  /** Readable roots instead of writable ones. */
  readOnly: boolean;
  /**
   * `--read-only-dir` directories (absolute native): readable only, as is every directory in force
   * inside one of them (the reference refuses a write inside any read-only directory).
   */
  readOnlyDirectories?: readonly string[];
  /** `--deny` values: a path, or a glob (relative ones under the first directory). */
  deny: readonly string[];
  /** What a policy file's profile adds to the protected surface. */
  executableSurface?: ExecutableSurfacePolicy | undefined;
  os: HostOs;
}

/**
 * The sandbox every tool call runs in: the allowed directories (writable, or readable with
 * `--read-only`), the platform's minimal reads (what the helper needs to start) and nothing else of
 * the disk, minus the deny entries. The protected names inside writable roots come with the profile.
 */
/**
 * The reference server reads nothing outside its allowed directories; the helper needs the minimal
 * roots to start, but not the host's configuration (`/etc`: `shadow` is readable by root), so a
 * link inside an allowed directory cannot reach it. Deeper entries win, so an allowed directory
 * inside it stays allowed; one that contains it keeps it readable, as the operator asked.
 */
const CONFIGURATION_ROOT: Partial<Record<HostOs, string>> = { linux: '/etc', macos: '/private/etc' };

function hiddenConfiguration(directories: readonly string[], os: HostOs): FileSystemEntry[] {
  const root = CONFIGURATION_ROOT[os];
  if (root === undefined) return [];
  const containsIt = directories.some(
    (directory) => root === directory || root.startsWith(`${directory.replace(/\/$/, '')}/`),
  );
  return containsIt ? [] : [{ path: { type: 'path', path: nativeToPathUri(root, os) }, access: 'deny' }];
}

export function mcpSandboxContext(options: McpSandboxOptions): SandboxContextInput {
  const { directories, os } = options;
  const first = directories[0] as string;
  const uri = (path: string) => nativeToPathUri(resolve(first, path), os);
  const roots = directories.map(uri);
  const markings = options.readOnlyDirectories ?? [];
  const within = (path: string, others: readonly string[]) =>
    others.some((other) => pathStartsWith(os, path, other));
  // A marking is a read root of the sandbox where it meets the directories in force: a deeper
  // entry than a writable root wins over it, and a directory inside a marking is not writable.
  const readOnlyDirectories = options.readOnly
    ? directories
    : [
        ...directories.filter((directory) => within(directory, markings)),
        ...markings.filter((marking) => !directories.includes(marking) && within(marking, directories)),
      ];
  const writable = options.readOnly ? [] : directories.filter((directory) => !within(directory, markings));
  const denyPaths = options.deny.filter((value) => !GLOB_CHARACTERS.test(value));
  const denyGlobs: FileSystemEntry[] = options.deny
    .filter((value) => GLOB_CHARACTERS.test(value))
    .map((pattern) => ({ path: { type: 'glob_pattern', pattern }, access: 'deny' }));
  const profile = workspaceWriteProfile({
    writableRoots: writable.map(uri),
    deny: denyPaths.map(uri),
  });
  const minimal: FileSystemEntry = { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' };
  const reads: FileSystemEntry[] = readOnlyDirectories.map((directory) => ({
    path: { type: 'path', path: uri(directory) },
    access: 'read',
  }));
  // The profile's whole-disk read becomes the minimal roots and the allowed directories — except
  // on Windows, whose restricted token confines writes only and refuses a narrowed read set.
  const entries =
    os === 'windows'
      ? [...profile.file_system.entries, ...(options.readOnly ? [] : reads), ...denyGlobs]
      : [
          minimal,
          ...hiddenConfiguration(directories, os),
          ...reads,
          ...profile.file_system.entries.filter((entry) => entry.path.type !== 'special'),
          ...denyGlobs,
        ];
  return {
    permissions: { ...profile, file_system: { ...profile.file_system, entries } },
    cwd: roots[0] as string,
    workspaceRoots: roots,
    windowsSandboxLevel: os === 'windows' ? 'restricted-token' : 'disabled',
    ...(options.executableSurface === undefined ? {} : { executableSurface: options.executableSurface }),
  };
}
