/**
 * One line of what a command's network did, for the audit log and `run`'s messages. A refusal or a
 * failure is reported when it happens; an allowed connection when it ends, with what it carried.
 */
export interface NetworkEvent {
  /** When the request arrived (ms since the epoch). */
  time: number;
  /**
   * How the command asked: an HTTP proxy request, a CONNECT tunnel, SOCKS5, a managed port, or a
   * relayed host unix socket (whose path is then `host` and `address`, with no port).
   */
  protocol: 'http' | 'connect' | 'socks5' | 'forward' | 'unix';
  /** The destination as the command named it (canonical), or null when it named none readable. */
  host: string | null;
  port: number | null;
  /** The address connected to, or the one refused; null when no address was judged. */
  address: string | null;
  /** `refused` by policy or a bound; `failed` for a look-up or connection that did not work. */
  outcome: 'allowed' | 'refused' | 'failed';
  reason: string | null;
  /** Bytes from the command to the destination, and back. */
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

export type NetworkEventListener = (event: NetworkEvent) => void;

/** An event of `protocol` for a request that arrived at `started`, ending now. */
export function networkEvent(
  protocol: NetworkEvent['protocol'],
  started: number,
  fields: Partial<Omit<NetworkEvent, 'protocol' | 'time' | 'durationMs'>>,
): NetworkEvent {
  return {
    time: started,
    protocol,
    host: null,
    port: null,
    address: null,
    outcome: 'refused',
    reason: null,
    bytesUp: 0,
    bytesDown: 0,
    ...fields,
    durationMs: Date.now() - started,
  };
}
