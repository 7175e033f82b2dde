import type { HostOs } from './host-os.js';

/**
 * Directories a process needs to start on each platform (the `minimal` special path): loader, libraries,
 * system configuration. Candidates only: the runner keeps those that exist, since binding a missing
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
