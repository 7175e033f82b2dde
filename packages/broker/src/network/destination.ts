import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import {
  addressKey,
  addressText,
  type CanonicalHost,
  decideAddress,
  decideName,
  destinationText,
  LIMITS,
  type NetworkAllowlist,
  parseIpAddress,
} from '@fs-sandbox/policy';

/**
 * Opening one destination for a command: judge the name, resolve it, judge every address it
 * resolves to, then connect to exactly an address that was judged. The socket is connected by
 * address, never by name, so a DNS answer that changes between the check and the connection (DNS
 * rebinding) cannot move it; and a name is refused when any of its addresses is, since which one
 * a client would have tried first is not ours to guess.
 */

/** What the proxy asks of the machine; tests give their own. */
export interface ProxyNetwork {
  /** Every address of a name, as getaddrinfo answers (the host's resolver and /etc/hosts). */
  lookup(name: string): Promise<string[]>;
  /** The host's own interface addresses, as `addressKey`s. */
  hostAddresses(): ReadonlySet<string>;
  /** A TCP connection to an IP address (no name resolution). */
  connect(address: string, port: number): Socket;
}

export const MACHINE_NETWORK: ProxyNetwork = {
  async lookup(name) {
    // Loaded by the first lookup: a program that starts without a network never resolves a name.
    const { lookup } = await import('node:dns/promises');
    const answers = await lookup(name, { all: true, verbatim: true });
    return answers.map((answer) => answer.address);
  },
  hostAddresses() {
    const keys = new Set<string>();
    for (const addresses of Object.values(networkInterfaces())) {
      for (const { address } of addresses ?? []) {
        const bytes = parseIpAddress(address);
        if (bytes !== null) keys.add(addressKey(bytes));
      }
    }
    return keys;
  },
  connect(address, port) {
    return connect({ host: address, port });
  },
};

export type Opened =
  | { kind: 'connected'; socket: Socket; address: string }
  | { kind: 'refused'; reason: string; address: string | null }
  | { kind: 'failed'; reason: string; address: string | null };

/** Look-ups of one command at once: getaddrinfo runs on the broker's thread pool, which file I/O shares. */
export class LookupSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= LIMITS.networkMaxLookups) await new Promise<void>((wake) => this.waiting.push(wake));
    this.running += 1;
    try {
      return await work();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }
}

/** A destination judged (name, then every address it resolves to), not connected. */
export type Judged =
  | { kind: 'allowed'; addresses: string[]; entry: string }
  | { kind: 'refused'; reason: string; address: string | null }
  | { kind: 'failed'; reason: string; address: string | null };

export async function judgeDestination(
  allowlist: NetworkAllowlist,
  host: CanonicalHost,
  port: number,
  network: ProxyNetwork,
  slots: LookupSlots,
): Promise<Judged> {
  const byName = decideName(allowlist, host, port);
  if (!byName.allowed) return { kind: 'refused', reason: byName.reason, address: null };
  let addresses: string[];
  if (host.address !== null) addresses = [host.name];
  else {
    try {
      addresses = await slots.run(() =>
        withDeadline(network.lookup(host.name), LIMITS.networkConnectTimeoutMs),
      );
    } catch (error) {
      return { kind: 'failed', reason: `cannot resolve ${host.name}: ${messageOf(error)}`, address: null };
    }
  }
  const judged: string[] = [];
  const own = network.hostAddresses();
  for (const text of addresses) {
    const bytes = parseIpAddress(text);
    if (bytes === null) continue;
    const decision = decideAddress(allowlist, byName.entries, host, port, bytes, own);
    if (!decision.allowed) return { kind: 'refused', reason: decision.reason, address: addressText(bytes) };
    judged.push(addressText(bytes));
  }
  if (judged.length === 0)
    return { kind: 'failed', reason: `${host.name} resolves to no IP address`, address: null };
  return { kind: 'allowed', addresses: judged, entry: (byName.entries[0] as { text: string }).text };
}

export async function openDestination(
  allowlist: NetworkAllowlist,
  host: CanonicalHost,
  port: number,
  network: ProxyNetwork,
  slots: LookupSlots,
): Promise<Opened> {
  const judged = await judgeDestination(allowlist, host, port, network, slots);
  if (judged.kind !== 'allowed') return judged;
  let last = '';
  for (const address of judged.addresses) {
    try {
      return { kind: 'connected', socket: await connected(network.connect(address, port)), address };
    } catch (error) {
      last = messageOf(error);
    }
  }
  return {
    kind: 'failed',
    reason: `cannot connect to ${destinationText(host, port)} (${judged.addresses.join(', ')}): ${last}`,
    address: judged.addresses[0] ?? null,
  };
}

/** The socket once it is connected; destroyed and rejected on an error or past the connect bound. */
function connected(socket: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no connection within ${LIMITS.networkConnectTimeoutMs / 1000} s`));
    }, LIMITS.networkConnectTimeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
  });
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function messageOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code} ${message}` : message;
}
