import type { HostOs } from './host-os.js';

/**
 * The `minimal` special path on each platform: loader, libraries, executables, system configuration. Candidates only: the runner keeps those that exist, since binding a missing
 * path makes the sandbox fail to start. Nothing here is writable and none holds user data; `/tmp`
 * is deliberately absent (the helper gets no scratch space it was not granted).
 */
const CANDIDATES: Record<HostOs, readonly string[]> = {
  linux: ['/bin', '/sbin', '/usr', '/etc', '/lib', '/lib64', '/nix/store', '/run/current-system/sw'],
  macos: [
    '/bin',
    '/sbin',
    '/usr/bin',
    '/usr/sbin',
    '/usr/lib',
    '/usr/libexec',
    '/usr/share',
    '/System/Library',
    '/System/Cryptexes',
    '/System/Volumes/Preboot/Cryptexes',
    '/Library/Apple',
    '/private/etc',
    '/private/var/db/timezone',
  ],
  windows: ['C:\\Windows', 'C:\\Program Files', 'C:\\Program Files (x86)', 'C:\\ProgramData'],
};

export function minimalReadRootCandidates(os: HostOs): string[] {
  return [...CANDIDATES[os]];
}

/**
 * Minimal roots that hold configuration rather than programs and libraries: the sandbox shows them
 * only where the policy grants them (a `minimal` entry or its own). On Linux that is `/etc`
 * (shadow, ssh host keys, the machine's configuration); nothing needs it to start. macOS and
 * Windows keep their whole minimal set as the runtime's (their helpers were never run without it).
 */
const CONFIGURATION: Record<HostOs, readonly string[]> = { linux: ['/etc'], macos: [], windows: [] };

/**
 * Of the minimal candidates, those every sandbox shows whatever the policy grants, so that a
 * program can start at all: its loader, libraries and executables.
 */
export function runtimeReadRootCandidates(os: HostOs): string[] {
  return CANDIDATES[os].filter((root) => !CONFIGURATION[os].includes(root));
}
