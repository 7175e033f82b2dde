import { createConnection, type Server, type Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import { type CanonicalHost, LIMITS, type NetworkAllowlist } from '@fs-sandbox/policy';
import {
  LookupSlots,
  MACHINE_NETWORK,
  type Opened,
  openDestination,
  type ProxyNetwork,
} from './destination.js';
import { httpFront } from './http-front.js';
import { type NetworkEvent, type NetworkEventListener, networkEvent } from './network-event.js';
import type { ProxyCore, RelayTarget } from './proxy-core.js';
import { socksFront } from './socks-front.js';

export type { ProxyCore, RelayTarget } from './proxy-core.js';

/**
 * The way out of one command's network namespace. The broker holds listening sockets that live in
 * the command's namespace (see sandbox-listeners.ts); connections the command makes to them are
 * accepted here, in the broker, and each is served as one of:
 *
 * - an HTTP proxy (http-front.ts): CONNECT tunnels and plain `http://` requests;
 * - a SOCKS5 proxy (socks-front.ts);
 * - a forward to one port of the host's loopback (the client's own proxy, under
 *   `enforceManagedNetwork`), judged by nothing here: the client's proxy decides.
 *
 * This is what the fronts share. Every destination goes through destination.ts (its name, then
 * each address it resolves to, then a connection to exactly an address that was judged).
 * Everything is bounded: connections open at once, bytes over the command's life, the time to send
 * a request, idle time. Refusals and failures become events when they happen, allowed connections
 * when they end. `close` ends all of it with the command.
 */
export interface CommandProxyOptions {
  onEvent: NetworkEventListener;
  /** The machine's resolver and connections; tests pass their own. */
  network?: ProxyNetwork;
}

export class CommandProxy implements ProxyCore {
  private readonly clients = new Set<Socket>();
  private readonly sockets = new Set<Duplex>();
  private readonly listeners: Server[] = [];
  private readonly network: ProxyNetwork;
  private readonly slots = new LookupSlots();
  private bytes = 0;
  private spent = false;
  private closed = false;
  private refusals = 0;

  constructor(
    private readonly allowlist: NetworkAllowlist | null,
    private readonly options: CommandProxyOptions,
  ) {
    this.network = options.network ?? MACHINE_NETWORK;
  }

  /** Serves an HTTP proxy on a listening socket of the command's namespace. */
  serveHttp(listener: Server): void {
    this.serve(listener, 'connect', httpFront(this));
  }

  /** Serves a SOCKS5 proxy on a listening socket of the command's namespace. */
  serveSocks(listener: Server): void {
    this.serve(listener, 'socks5', socksFront(this));
  }

  /** Relays every connection to `port` on the host's loopback (the client's own proxy). */
  serveForward(listener: Server, port: number): void {
    const loopback: CanonicalHost = { name: '127.0.0.1', address: [127, 0, 0, 1] };
    this.serve(listener, 'forward', (socket) => {
      const started = Date.now();
      socket.pause();
      const upstream = this.network.connect('127.0.0.1', port);
      upstream.once('connect', () =>
        this.relay(
          { protocol: 'forward', host: loopback, port, address: '127.0.0.1', started },
          socket,
          upstream,
        ),
      );
      upstream.once('error', (error) => {
        if (!upstream.connecting) return;
        socket.destroy();
        const reason = `cannot connect to the host's 127.0.0.1:${port}: ${error.message}`;
        this.report(
          networkEvent('forward', started, {
            host: '127.0.0.1',
            port,
            address: '127.0.0.1',
            outcome: 'failed',
            reason,
          }),
        );
      });
    });
  }

  /**
   * Relays every connection to the host unix socket at `target` (a real path checked when the
   * command started, unix-relay.ts), judged by nothing here: the context named it.
   */
  serveUnixRelay(listener: Server, target: string): void {
    this.serve(listener, 'unix', (socket) => {
      const started = Date.now();
      socket.pause();
      const upstream = createConnection({ path: target });
      upstream.once('connect', () =>
        this.relay({ protocol: 'unix', host: null, port: 0, address: target, started }, socket, upstream),
      );
      upstream.once('error', (error) => {
        if (!upstream.connecting) return;
        socket.destroy();
        this.report(
          networkEvent('unix', started, {
            host: target,
            address: target,
            outcome: 'failed',
            reason: `cannot connect to the host's unix socket ${target}: ${error.message}`,
          }),
        );
      });
    });
  }

  /** Ends every connection and stops accepting: the command is gone. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.listeners) listener.close();
    for (const socket of [...this.sockets]) socket.destroy();
  }

  open(host: CanonicalHost, port: number): Promise<Opened> {
    if (this.spent) return Promise.resolve({ kind: 'refused', reason: this.spentReason(), address: null });
    if (this.allowlist === null)
      return Promise.resolve({
        kind: 'refused',
        reason: 'this command has no proxy allowlist',
        address: null,
      });
    return openDestination(this.allowlist, host, port, this.network, this.slots);
  }

  relay(target: RelayTarget, client: Socket, upstream: Socket, head?: Buffer): void {
    this.track(upstream);
    const traffic = this.traffic(client, upstream);
    if (head !== undefined && head.length > 0) {
      upstream.write(head);
      traffic.up += head.length;
      this.count(head.length);
    }
    const stop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.setTimeout(LIMITS.networkIdleTimeoutMs, stop);
    upstream.setTimeout(LIMITS.networkIdleTimeoutMs, stop);
    client.on('error', stop);
    upstream.on('error', stop);
    let open = 2;
    const closed = () => {
      open -= 1;
      if (open > 0) return;
      this.report(
        networkEvent(target.protocol, target.started, {
          // A relayed unix socket is named by its path and has no port.
          host: target.protocol === 'unix' ? target.address : (target.host?.name ?? null),
          port: target.protocol === 'unix' ? null : target.port,
          address: target.address,
          outcome: 'allowed',
          bytesUp: traffic.up,
          bytesDown: traffic.down,
        }),
      );
    };
    client.once('close', closed);
    upstream.once('close', closed);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }

  traffic(fromCommand: Readable, toCommand: Readable): { up: number; down: number } {
    const traffic = { up: 0, down: 0 };
    fromCommand.on('data', (chunk: Buffer) => {
      traffic.up += chunk.length;
      this.count(chunk.length);
    });
    toCommand.on('data', (chunk: Buffer) => {
      traffic.down += chunk.length;
      this.count(chunk.length);
    });
    return traffic;
  }

  track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    if (this.closed) socket.destroy();
  }

  broken(socket: Duplex, error: unknown): void {
    socket.destroy();
    const message = error instanceof Error ? error.message : String(error);
    this.report(
      networkEvent('connect', Date.now(), { outcome: 'failed', reason: `internal proxy error: ${message}` }),
    );
  }

  /** Every event, except refusals and failures past their bound: one line then says so. */
  report(event: NetworkEvent): void {
    if (event.outcome !== 'allowed') {
      this.refusals += 1;
      if (this.refusals > LIMITS.networkMaxRefusalEvents + 1) return;
      if (this.refusals === LIMITS.networkMaxRefusalEvents + 1) {
        this.options.onEvent({
          ...event,
          reason: `more than ${LIMITS.networkMaxRefusalEvents} refused or failed connections; further ones are not reported`,
        });
        return;
      }
    }
    this.options.onEvent(event);
  }

  private serve(
    listener: Server,
    protocol: NetworkEvent['protocol'],
    handle: (socket: Socket) => void,
  ): void {
    if (this.closed) {
      listener.close();
      return;
    }
    // A client's end of its request must not end our answer to it (an HTTP client may half-close).
    (listener as Server & { allowHalfOpen: boolean }).allowHalfOpen = true;
    this.listeners.push(listener);
    listener.on('connection', (socket: Socket) => {
      socket.on('error', () => {});
      if (this.closed) {
        socket.destroy();
        return;
      }
      if (this.spent || this.clients.size >= LIMITS.networkMaxConnections) {
        socket.destroy();
        const reason = this.spent
          ? this.spentReason()
          : `more than ${LIMITS.networkMaxConnections} connections open at once`;
        this.report(networkEvent(protocol, Date.now(), { reason }));
        return;
      }
      this.clients.add(socket);
      this.track(socket);
      socket.once('close', () => this.clients.delete(socket));
      // Until the request is read; a relay sets the idle bound instead.
      socket.setTimeout(LIMITS.networkRequestTimeoutMs, () => socket.destroy());
      handle(socket);
    });
  }

  private count(length: number): void {
    this.bytes += length;
    if (this.spent || this.bytes <= LIMITS.networkMaxBytes) return;
    this.spent = true;
    this.report(networkEvent('connect', Date.now(), { reason: this.spentReason() }));
    for (const socket of [...this.sockets]) socket.destroy();
  }

  private spentReason(): string {
    return `the command's network bound of ${LIMITS.networkMaxBytes / 1024 ** 3} GiB is spent`;
  }
}
