import {
  canonicalHost,
  commandNetworkOf,
  destinationText,
  FsError,
  parsePort,
  parseSandboxContext,
} from '@fs-sandbox/policy';
import { judgeDestination, LookupSlots, MACHINE_NETWORK, type ProxyNetwork } from './destination.js';

/** Whether a command under a context may reach one destination, and the rule that decided. */
export interface NetworkExplanation {
  /** `host:port` as judged. */
  destination: string;
  reachable: boolean;
  reason: string;
  /** The allow entry that lets it through, when one does. */
  entry?: string;
  /** The addresses the proxy would connect to (it resolved the name as it would for the command). */
  addresses?: string[];
}

/**
 * `fs-sandbox why --host`: the proxy's own judgement of `HOST:PORT` (or an http/https URL) for a
 * command under `sandbox`, made the way the proxy makes it (name, then each address the name
 * resolves to here and now), without connecting.
 */
export async function explainNetwork(
  sandbox: unknown,
  target: string,
  network: ProxyNetwork = MACHINE_NETWORK,
): Promise<NetworkExplanation> {
  const { host, port } = parseTarget(target);
  const destination = destinationText(host, port);
  const profile = parseSandboxContext(sandbox)?.permissions ?? null;
  if (profile === null || profile.type !== 'managed')
    return {
      destination,
      reachable: true,
      reason: 'this context runs commands without a sandbox: the whole network',
    };
  const mode = commandNetworkOf(profile, { enforce: false, context: null }, {});
  if (mode.kind === 'host')
    return { destination, reachable: true, reason: "the context gives commands the host's whole network" };
  if (mode.kind !== 'proxy')
    return { destination, reachable: false, reason: 'the context gives commands no network' };
  const judged = await judgeDestination(mode.allowlist, host, port, network, new LookupSlots());
  if (judged.kind === 'allowed')
    return {
      destination,
      reachable: true,
      reason: `allowed by the entry ${judged.entry}`,
      entry: judged.entry,
      addresses: judged.addresses,
    };
  return { destination, reachable: false, reason: judged.reason };
}

function parseTarget(target: string): { host: NonNullable<ReturnType<typeof canonicalHost>>; port: number } {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? safeUrl(target) : null;
  if (url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '') {
    const host = canonicalHost(url.hostname);
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    if (host !== null) return { host, port };
  }
  const match = /^(\[[^\]]*\]|[^:]*):([^:]+)$/.exec(target);
  const host = match === null ? null : canonicalHost(match[1] as string);
  const port = match === null ? null : parsePort(match[2] as string);
  if (host === null || port === null)
    throw new FsError('invalid_params', `${JSON.stringify(target)} is not HOST:PORT or an http(s):// URL`);
  return { host, port };
}

function safeUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
