import type { NetworkEvent } from '@fs-sandbox/broker/internal';
import type { FsError, WireError } from '@fs-sandbox/policy';
import type { EnvironmentInfo, HandshakeState } from './handshake.js';
import { handshakeError, initializeResult, repeatedInitializeError } from './handshake.js';
import { handlerFor, type MethodHandler, orderingKey, parseInitializeParams } from './method-handlers.js';
import { MethodNotFoundError, toRpcError } from './wire-errors.js';

/**
 * A protocol the JSON-RPC server speaks over its connections: the exec-server's (`serve`) or the
 * app-server's V2 surface (`app-server`). The transports, framing, scheduling, reply budgets and
 * audit log are the connection's and the same for both; a surface decides only what differs
 * between the two wires: the handshake, which methods exist and how each is answered, how an
 * error and a notification are written, and the state one connection keeps (the app-server's
 * watches and processes).
 */
export interface ProtocolSurface {
  /** Opens one connection's side of the protocol; `notifier` reaches that connection's client. */
  open(notifier: SessionNotifier): SurfaceSession;
  /** Why a request may not run in this handshake state, or null. */
  handshakeError(state: HandshakeState): FsError | null;
  repeatedInitializeError(): FsError;
  /** A thrown value as this wire's error object. */
  wireError(error: unknown): WireError;
  /** One notification as this wire carries it. */
  notification(method: string, params: object): object;
  orderingKey(method: string, params: unknown): string | null;
}

/** What a surface keeps per connection. */
export interface SurfaceSession {
  /** The result of `initialize` (its params parsed; a parse error thrown). */
  initialize(params: unknown, environment: EnvironmentInfo): unknown;
  /** The handler of a method, or null when this surface has no such method. */
  handlerFor(method: string): MethodHandler | null;
  /** The error for a method this surface does not have. */
  methodNotFound(method: string): unknown;
  /** The client read some notifications: output paused for it may go on. */
  resumeOutput?(): void;
  /**
   * The client sent its last message and may still read the replies of what it asked (stdin
   * ended): what runs only on its behalf beyond its requests may end now. Called before those
   * requests are waited for, so one that never ends on its own does not keep the connection.
   */
  inputEnded?(): void;
  /** The connection is gone: everything the session started ends, nothing more is sent. */
  close?(): void;
}

/**
 * Sends what a session produces between replies, held against the connection's unsent budget.
 * `Notifications` are the surface's, by name (`AppNotification`), typed from the schemas its method
 * table declares.
 */
export interface SessionNotifier<Notifications extends object = Record<string, object>> {
  notify<N extends keyof Notifications & string>(method: N, params: Notifications[N]): void;
  /** False while the connection's unsent notifications exceed LIMITS.processUnsentOutputBytes. */
  hasRoom(): boolean;
  /** A network connection a command (by its process id or key) made through the broker, for the audit log. */
  network?(processId: string, event: NetworkEvent): void;
}

const execServerSession: SurfaceSession = {
  initialize(params, environment) {
    parseInitializeParams(params);
    return initializeResult(environment);
  },
  handlerFor,
  methodNotFound: (method) => new MethodNotFoundError(method),
};

/**
 * The Codex exec-server's protocol: `fs-sandbox serve`. Its per-connection state (read handles,
 * processes) is the connection's own, from before surfaces existed.
 */
export const EXEC_SERVER_SURFACE: ProtocolSurface = {
  open: () => execServerSession,
  handshakeError,
  repeatedInitializeError,
  wireError: toRpcError,
  notification: (method, params) => ({ method, params }),
  orderingKey,
};
