import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import type { CanonicalHost } from '@fs-sandbox/policy';
import type { Opened } from './destination.js';
import type { NetworkEvent } from './network-event.js';

/**
 * What the protocol fronts (HTTP, SOCKS) use of the command proxy, in a leaf file: the proxy imports
 * the fronts, and the fronts importing the proxy back for these types was an import cycle.
 */

/** Where a relayed connection goes, for its event. */
export interface RelayTarget {
  protocol: NetworkEvent['protocol'];
  host: CanonicalHost | null;
  port: number;
  address: string;
  started: number;
}

/** What the protocol fronts use of the proxy. */
export interface ProxyCore {
  /** Judges and connects a destination (refused without an allowlist, or once the byte bound is spent). */
  open(host: CanonicalHost, port: number): Promise<Opened>;
  /** Relays both ways until both ends are done; `head` is what the client already sent the destination. */
  relay(target: RelayTarget, client: Socket, upstream: Socket, head?: Buffer): void;
  /** Bytes one connection carries each way (from the command, and back), counted against the bound. */
  traffic(fromCommand: Readable, toCommand: Readable): { up: number; down: number };
  /** A socket closed with the command. */
  track(socket: Duplex): void;
  report(event: NetworkEvent): void;
  /** A bug of ours while serving a client: its connection is closed (never left open or let through), and said. */
  broken(socket: Duplex, error: unknown): void;
}
