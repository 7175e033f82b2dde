import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import { LIMITS } from '../limits.js';
import { pathUriToNative } from '../path-uri.js';
import type { PermissionProfile } from '../schemas/sandbox-context.js';
import type { NetworkAllowlist } from './network-decision.js';
import { type NetworkEntry, parseNetworkEntry } from './network-entry.js';
import { canonicalHost, parsePort } from './network-host.js';

/**
 * What network a command gets, decided from its context and `process/start`'s managed-network
 * fields:
 *
 * - `none`: its own network namespace with nothing in it but loopback (`network: restricted`).
 * - `host`: the host's network namespace (`network: enabled`), as before.
 * - `proxy`: its own namespace, where the only way out is the broker's proxy on a loopback port,
 *   which lets through what `allowlist` allows (`network_domains`).
 * - `managed`: its own namespace, where each of `loopbackPorts` leads to the same port on the
 *   host's loopback, the client's own proxy (`enforceManagedNetwork`, as the reference does it).
 */
export type CommandNetwork =
  | ({ kind: 'none' } & UnixSocketRelays)
  | { kind: 'host' }
  | ({ kind: 'proxy'; allowlist: NetworkAllowlist } & UnixSocketRelays)
  | ({ kind: 'managed'; loopbackPorts: number[] } & UnixSocketRelays);

/**
 * Host unix sockets (native absolute paths, as the context names them) the broker relays into the
 * command's own namespace (`unix_sockets`); absent or empty: none. A command with the host's
 * network has no namespace of its own to relay into (the context's schema refuses the pair).
 */
export interface UnixSocketRelays {
  unixSockets?: string[];
}

/** `process/start`'s managed-network fields, as parsed (see process-params.ts). */
export interface ManagedNetworkRequest {
  enforce: boolean;
  /** `managedNetwork`, when the client sent it. */
  context: { loopbackPorts: number[]; allowLocalBinding: boolean } | null;
}

/** The variables whose loopback URL the reference routes when no `managedNetwork` names the ports. */
const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'FTP_PROXY'];

/**
 * The command's network. `env` is the command's own environment: when the client asks for managed
 * networking without naming the ports (clients older than `managedNetwork`), the reference routes
 * the loopback proxies its proxy variables name, and so does this. Refuses what it cannot enforce
 * (`sandbox_unavailable`, nothing runs): managed networking with no port to route, or a proxy
 * variable that points at a port `managedNetwork` does not list; and both an allowlist and
 * managed networking, which would each decide the command's way out.
 */
export function commandNetworkOf(
  profile: PermissionProfile,
  managed: ManagedNetworkRequest,
  env: Readonly<Record<string, string>>,
  os: HostOs = 'linux',
): CommandNetwork {
  const domains = profile.type === 'managed' ? profile.network_domains : null;
  const sockets = profile.type === 'managed' ? (profile.unix_sockets ?? []) : [];
  const relays: UnixSocketRelays =
    sockets.length === 0
      ? {}
      : { unixSockets: [...new Set(sockets.map((uri) => pathUriToNative(uri, os)))].sort() };
  if (managed.enforce) {
    if (domains != null)
      throw refusal(
        "enforceManagedNetwork routes the command to the client's proxy, and network_domains to this broker's: send one of them",
      );
    return { kind: 'managed', loopbackPorts: managedPorts(managed, env), ...relays };
  }
  if (domains != null)
    return {
      kind: 'proxy',
      allowlist: { allow: domains.allow.map(entryOf), deny: domains.deny.map(entryOf) },
      ...relays,
    };
  return profile.type === 'managed' && profile.network === 'enabled'
    ? { kind: 'host' }
    : { kind: 'none', ...relays };
}

/** An entry the context's schema already checked. */
function entryOf(text: string): NetworkEntry {
  const entry = parseNetworkEntry(text);
  if (typeof entry === 'string') throw new FsError('invalid_params', `network entry \`${text}\`: ${entry}`);
  return entry;
}

function managedPorts(managed: ManagedNetworkRequest, env: Readonly<Record<string, string>>): number[] {
  const named = loopbackProxyPorts(env);
  if (managed.context !== null && managed.context.loopbackPorts.length > 0) {
    const listed = new Set(managed.context.loopbackPorts);
    const outside = named.find((port) => !listed.has(port));
    if (outside !== undefined)
      throw refusal(
        `a proxy variable points at 127.0.0.1:${outside}, which managedNetwork.loopbackPorts does not list`,
      );
    return [...listed].sort((a, b) => a - b);
  }
  if (named.length === 0)
    throw refusal(
      "enforceManagedNetwork needs the ports of the client's proxy: managedNetwork.loopbackPorts, or proxy variables (HTTP_PROXY, …) that point at a loopback port",
    );
  if (named.length > LIMITS.networkMaxManagedPorts)
    throw refusal(`the proxy variables name more than ${LIMITS.networkMaxManagedPorts} loopback ports`);
  return named;
}

/**
 * The loopback ports the command's proxy variables (either case) point at, as the reference reads
 * them: a URL whose host is `localhost`, `127.0.0.1` or `::1`, its port or the scheme's default.
 */
export function loopbackProxyPorts(env: Readonly<Record<string, string>>): number[] {
  const ports = new Set<number>();
  for (const [name, value] of Object.entries(env)) {
    if (!PROXY_VARIABLES.includes(name.toUpperCase())) continue;
    const port = loopbackPortOf(value.trim());
    if (port !== null) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}

const DEFAULT_PORTS: Record<string, number> = {
  'http:': 80,
  'https:': 443,
  'socks5:': 1080,
  'socks5h:': 1080,
  'socks4:': 1080,
  'socks4a:': 1080,
};

function loopbackPortOf(value: string): number | null {
  if (value === '') return null;
  let url: URL;
  try {
    url = new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return null;
  }
  const host = canonicalHost(url.hostname);
  const loopback = host !== null && ['localhost', '127.0.0.1', '::1'].includes(host.name);
  if (!loopback) return null;
  if (url.port === '') return DEFAULT_PORTS[url.protocol] ?? null;
  return parsePort(url.port);
}

function refusal(message: string): FsError {
  return new FsError('sandbox_unavailable', message, { kind: 'sandboxPreparation' });
}
