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

/**
 * Root-only secrets inside the minimal set: files a root broker's sandbox could read through a
 * `minimal` entry or a whole-disk read (its uid is root on the host, and mode 0600/0640 stops no
 * one but other uids), though no program needs them to run. Those grants include everything
 * *except* these: each is denied at its own depth, labelled as the grant's
 * (permissions/access.ts secretsCarvedFrom), and masked by the sandbox (widening.ts adds the deny
 * entries beside the grant). A policy that grants one by its own entry still gets it unless it also
 * has such a grant (the deeper deny wins then), and a policy that grants `/etc` by its own path
 * reads them, as it asked. Exact paths, not
 * globs: the ssh key types are spelled out, since a deny glob makes every launch scan the host and
 * refuses a sandbox where the glob could match through a symlink (a NixOS `/etc` is links).
 */
export interface RootOnlySecret {
  path: string;
  why: string;
}

const ROOT_ONLY_SECRETS: Record<HostOs, readonly RootOnlySecret[]> = {
  linux: [
    { path: '/etc/shadow', why: 'password hashes of every local account' },
    { path: '/etc/shadow-', why: 'the previous /etc/shadow, kept by the tools that edit it' },
    { path: '/etc/gshadow', why: 'group password hashes and group administrators' },
    { path: '/etc/gshadow-', why: 'the previous /etc/gshadow' },
    { path: '/etc/security/opasswd', why: "pam_pwhistory's old password hashes" },
    ...['dsa', 'ecdsa', 'ed25519', 'rsa'].map((type) => ({
      path: `/etc/ssh/ssh_host_${type}_key`,
      why: "the SSH server's private host key (whoever holds it can pose as this host)",
    })),
    { path: '/etc/ssl/private', why: 'private keys of the TLS certificates the host serves' },
    { path: '/etc/krb5.keytab', why: "the host's Kerberos keys (act as the host in its realm)" },
    {
      path: '/etc/NetworkManager/system-connections',
      why: 'Wi-Fi, VPN and 802.1X passwords of the system connections',
    },
    { path: '/etc/wireguard', why: 'WireGuard private keys' },
    { path: '/etc/ipsec.secrets', why: 'IPsec pre-shared and private keys' },
  ],
  macos: [],
  windows: [],
};

export function rootOnlySecrets(os: HostOs): readonly RootOnlySecret[] {
  return ROOT_ONLY_SECRETS[os];
}
