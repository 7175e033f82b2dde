import { FsError, isErrorKind, RPC_CODES, type WireError } from '@fs-sandbox/policy';

/**
 * One JSON-RPC connection to an exec-server (`fs-sandbox serve` or the Codex exec-server), over a
 * transport that carries whole messages. It speaks the reference's handshake, matches replies to
 * requests by id, and turns every way a connection can end into one typed error
 * (`connection_lost`) for every request still waiting: none of them hangs.
 */

/** What a transport gives the client: whole messages out and in, and one end. */
export interface MessageTransport {
  send(message: string): void;
  /** Called once per incoming message, and once with the reason when the transport ends. */
  start(handlers: { message(text: string): void; closed(reason: string): void }): void;
  /** Stop reading incoming messages (the peer then feels back-pressure), and read again. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

type NotificationListener = (method: string, params: unknown) => void;

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: FsError): void;
}

export class RpcClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private lost: FsError | null = null;
  private readonly notificationListeners: NotificationListener[] = [];
  private readonly lostListeners: ((error: FsError) => void)[] = [];

  constructor(
    private readonly transport: MessageTransport,
    private readonly peer: string,
  ) {
    transport.start({
      message: (text) => this.receive(text),
      closed: (reason) => this.fail(connectionLost(peer, reason)),
    });
  }

  /** The reference's handshake: `initialize`, then the `initialized` notification. */
  async handshake(clientName: string): Promise<unknown> {
    const result = await this.request('initialize', { clientName });
    this.notify('initialized', {});
    return result;
  }

  request(method: string, params: unknown, options: { signal?: AbortSignal; timeoutMs?: number } = {}) {
    if (this.lost !== null) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        this.pending.delete(id);
        if (timer !== undefined) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      };
      // The wire has no cancel: the server finishes the operation, its reply is dropped here.
      const onAbort = () => {
        settle();
        reject(new FsError('internal_error', `${method} cancelled; the server may still complete it`));
      };
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          settle();
          reject(
            new FsError('timeout', `${method} got no reply from ${this.peer} within ${options.timeoutMs} ms`),
          );
        }, options.timeoutMs);
      }
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        method,
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.transport.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  notify(method: string, params: unknown): void {
    if (this.lost === null) this.transport.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  /** Told every notification the peer sends (a message with a method and no id). */
  onNotification(listener: NotificationListener): void {
    this.notificationListeners.push(listener);
  }

  /** Told once when the connection ends, with the error its waiting requests got. */
  onLost(listener: (error: FsError) => void): void {
    this.lostListeners.push(listener);
  }

  pauseReading(): void {
    this.transport.pause();
  }

  resumeReading(): void {
    this.transport.resume();
  }

  async close(): Promise<void> {
    this.fail(new FsError('connection_lost', `the connection to ${this.peer} was closed by this client`));
    await this.transport.close();
  }

  private receive(text: string): void {
    let message: { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      this.fail(connectionLost(this.peer, 'it sent a message that is not JSON'));
      return;
    }
    if (message.id === undefined && typeof message.method === 'string') {
      for (const listener of this.notificationListeners) listener(message.method, message.params);
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    if (message.error !== undefined) pending.reject(fromWireError(message.error, pending.method));
    else pending.resolve(message.result);
  }

  private fail(error: FsError): void {
    const first = this.lost === null;
    this.lost ??= error;
    for (const pending of [...this.pending.values()]) pending.reject(this.lost);
    if (first) for (const listener of this.lostListeners) listener(this.lost);
  }
}

function connectionLost(peer: string, reason: string): FsError {
  return new FsError('connection_lost', `the connection to ${peer} was lost: ${reason}`);
}

/** The kind a reply without `data.errorKind` (the Codex exec-server's) stands for, by its code. */
const KIND_BY_CODE = new Map<number, WireError['data']['errorKind']>([
  [RPC_CODES.notFound, 'not_found'],
  [RPC_CODES.invalidParams, 'invalid_params'],
  [RPC_CODES.invalidRequest, 'invalid_request'],
  [RPC_CODES.methodNotFound, 'invalid_request'],
  [RPC_CODES.internalError, 'io_error'],
]);

/** A wire error as the FsError the local broker would have thrown (same kind, message and data). */
function fromWireError(error: unknown, method: string): FsError {
  const wire = (typeof error === 'object' && error !== null ? error : {}) as Partial<WireError>;
  const message = typeof wire.message === 'string' ? wire.message : `${method} failed`;
  const { errorKind, ...extra } = (wire.data ?? {}) as Record<string, unknown>;
  const kind = isErrorKind(errorKind)
    ? errorKind
    : (KIND_BY_CODE.get(typeof wire.code === 'number' ? wire.code : 0) ?? 'internal_error');
  return new FsError(kind, message, Object.keys(extra).length > 0 ? extra : undefined);
}
