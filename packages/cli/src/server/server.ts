import type { Readable, Writable } from 'node:stream';
import { LIMITS } from '@fs-sandbox/policy';
import type { AuditSink } from './audit-log.js';
import type { EnvironmentInfo } from './handshake.js';
import { describeEnvironment } from './handshake.js';
import { originVerifier } from './origin-check.js';
import type { TransportLabel } from './parse-message.js';
import { ReplyBudget } from './reply-budget.js';
import { type ConnectionSettings, type ReplyOutput, RpcConnection } from './rpc-connection.js';
import type { ServerBroker } from './server-broker.js';
import { ServerStats, type ServerStatsSnapshot, type StatsSource } from './server-stats.js';
import { serveStdio } from './stdio-transport.js';
import type { ProtocolSurface } from './surface.js';
import { bearerVerifier } from './token-auth.js';
import { listenWebSocket, type WebSocketListener } from './ws-transport.js';

export interface ServerOptions {
  broker: ServerBroker;
  /** Requests of one connection running at once (the reference runs 1). */
  concurrency?: number;
  /** Requests of one connection waiting for a slot before further ones are refused. */
  maxQueued?: number;
  maxMessageBytes?: number;
  /** Unsent reply bytes one connection may hold before its new requests wait for the client to read. */
  maxUnsentBytes?: number;
  /** The same, for every connection together. */
  maxUnsentBytesTotal?: number;
  maxConnections?: number;
  audit?: AuditSink | null;
  /** What `initialize` reports; defaults to this process's facts. */
  environment?: EnvironmentInfo;
  /** The protocol spoken (default: the exec-server's; `app-server` passes the V2 surface). */
  surface?: ProtocolSurface;
}

export interface WebSocketOptions {
  host: string;
  port: number;
  /** The capability token every client must present as `Authorization: Bearer <token>`. */
  token: string;
  /** Origins a handshake may carry (exactly as browsers send them); without one, none may. */
  allowedOrigins?: readonly string[];
}

export interface FsRpcServer {
  /** Serves one connection over a stream pair; resolves when it has ended and been cleaned up. */
  serveStdio(input: Readable, output: Writable): Promise<void>;
  listenWebSocket(options: WebSocketOptions): Promise<WebSocketListener>;
  stats(): ServerStatsSnapshot;
  /** Adds a named section to every statistics snapshot (for example a warm helper pool). */
  addStatsSource(name: string, source: StatsSource): void;
  /** Stops listeners and closes every connection, aborting running calls. The broker stays open. */
  close(): Promise<void>;
}

export const SERVER_DEFAULTS = {
  concurrency: 8,
  maxQueued: 64,
  maxConnections: 64,
  maxMessageBytes: LIMITS.rpcMaxMessageBytes,
  maxUnsentBytes: LIMITS.replyMaxUnsentBytesPerConnection,
  maxUnsentBytesTotal: LIMITS.replyMaxUnsentBytesTotal,
} as const;

export function createServer(options: ServerOptions): FsRpcServer {
  const maxMessageBytes = options.maxMessageBytes ?? SERVER_DEFAULTS.maxMessageBytes;
  const maxConnections = options.maxConnections ?? SERVER_DEFAULTS.maxConnections;
  const stats = new ServerStats();
  const replyBudget = new ReplyBudget({
    perConnection: options.maxUnsentBytes ?? SERVER_DEFAULTS.maxUnsentBytes,
    total: options.maxUnsentBytesTotal ?? SERVER_DEFAULTS.maxUnsentBytesTotal,
  });
  const settings: ConnectionSettings = {
    broker: options.broker,
    environment: options.environment ?? describeEnvironment(),
    scheduler: {
      maxInFlight: options.concurrency ?? SERVER_DEFAULTS.concurrency,
      maxQueued: options.maxQueued ?? SERVER_DEFAULTS.maxQueued,
      // Running plus waiting requests of one connection hold at most two maximal messages' worth.
      maxPendingBytes: 2 * maxMessageBytes,
    },
    replyBudget,
    maxMessageBytes,
    maxHandles: LIMITS.maxOpenHandlesPerConnection,
    audit: options.audit ?? null,
    stats,
    ...(options.surface === undefined ? {} : { surface: options.surface }),
  };
  const connections = new Set<RpcConnection>();
  const listeners = new Set<WebSocketListener>();
  let nextConnection = 1;

  const open = (transport: TransportLabel, output: ReplyOutput): RpcConnection => {
    const connection = new RpcConnection(`c${nextConnection++}`, transport, settings, output);
    stats.connectionsTotal += 1;
    connections.add(connection);
    return connection;
  };
  const forget = (connection: RpcConnection) => connections.delete(connection);

  return {
    async serveStdio(input, output) {
      let connection: RpcConnection | undefined;
      await serveStdio(input, output, maxMessageBytes, (replies) => {
        connection = open('stdio', replies);
        return connection;
      });
      if (connection) forget(connection);
    },

    async listenWebSocket(ws) {
      const listener = await listenWebSocket({
        host: ws.host,
        port: ws.port,
        maxMessageBytes,
        acceptOrigin: originVerifier(ws.allowedOrigins ?? []),
        authorize: bearerVerifier(ws.token),
        canAccept: () => connections.size < maxConnections,
        onRefused: () => {
          stats.connectionsRefused += 1;
        },
        open: (replies) => open('websocket', replies),
        closed: forget,
      });
      listeners.add(listener);
      return listener;
    },

    stats() {
      let inFlight = 0;
      let queued = 0;
      let openHandles = 0;
      for (const connection of connections) {
        inFlight += connection.inFlight;
        queued += connection.queued;
        openHandles += connection.openHandles;
      }
      return stats.snapshot({
        openConnections: connections.size,
        inFlight,
        queued,
        openHandles,
        unsentBytes: replyBudget.held,
      });
    },

    addStatsSource(name, source) {
      stats.addSource(name, source);
    },

    async close() {
      const closing = [...connections].map((connection) => connection.close());
      connections.clear();
      await Promise.all([...closing, ...[...listeners].map((listener) => listener.close())]);
      listeners.clear();
    },
  };
}
