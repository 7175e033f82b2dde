import type { NetworkEvent } from '@fs-sandbox/broker/internal';
import { currentHostOs, FsError, LIMITS } from '@fs-sandbox/policy';
import type { AuditSink } from './audit-log.js';
import { type EncodedReply, encodeReplyParts } from './encode-reply.js';
import { FileHandleManager } from './file-handles.js';
import type { EnvironmentInfo, HandshakeState } from './handshake.js';
import { parseMessage, quoteBounded, type TransportLabel } from './parse-message.js';
import { ProcessTable } from './process-table.js';
import type { ReplyAccount, ReplyBudget } from './reply-budget.js';
import { RequestScheduler, type SchedulerLimits } from './request-scheduler.js';
import { HANDSHAKE_METHODS, type Reply, type RequestId, UNPARSABLE_ID } from './rpc-messages.js';
import type { ServerBroker } from './server-broker.js';
import type { OperationFacts } from './server-call-context.js';
import type { ServerStats } from './server-stats.js';
import { EXEC_SERVER_SURFACE, type ProtocolSurface, type SurfaceSession } from './surface.js';

/** What every connection of one server shares. */
export interface ConnectionSettings {
  broker: ServerBroker;
  environment: EnvironmentInfo;
  scheduler: SchedulerLimits;
  replyBudget: ReplyBudget;
  maxMessageBytes: number;
  maxHandles: number;
  audit: AuditSink | null;
  stats: ServerStats;
  /** The protocol spoken (default: the exec-server's). */
  surface?: ProtocolSurface;
}

/**
 * Where replies go; the transport adds its own framing (a newline on stdio, a text frame on
 * WebSocket). `parts` may be produced lazily (a large read's base64, slice by slice): the transport
 * pulls the next part only when its peer has taken the previous ones, and keeps replies in order.
 * `written` is called once the peer has taken the whole reply, or the reply was dropped because the
 * peer is gone.
 */
export interface ReplyOutput {
  send(parts: Iterable<Buffer>, written: () => void): void;
}

/**
 * One JSON-RPC connection, independent of its transport: the handshake, dispatch, bounded
 * concurrency, the read handles, and clean-up. Closing it aborts every broker call still running
 * (which kills their helpers) and forgets every handle.
 */
export class RpcConnection {
  private state: HandshakeState = 'new';
  private closed = false;
  private readonly handles: FileHandleManager;
  private readonly processes: ProcessTable;
  private cleanedUp: Promise<void> = Promise.resolve();
  private readonly scheduler: RequestScheduler;
  private readonly unsent: ReplyAccount;
  private readonly running = new Set<AbortController>();
  private readonly surface: ProtocolSurface;
  private readonly session: SurfaceSession;

  constructor(
    readonly id: string,
    private readonly transport: TransportLabel,
    private readonly settings: ConnectionSettings,
    private readonly output: ReplyOutput,
  ) {
    this.handles = new FileHandleManager(settings.broker, settings.maxHandles);
    this.unsent = settings.replyBudget.open(() => {
      this.scheduler.resume();
      this.processes.resumeOutput();
      this.session.resumeOutput?.();
    });
    const notifier = {
      notify: (method: string, params: object) => this.sendNotification(method, params),
      hasRoom: () => this.unsent.held < LIMITS.processUnsentOutputBytes,
      network: (processId: string, event: NetworkEvent) =>
        this.settings.audit?.recordNetwork(this.id, processId, event),
    };
    this.processes = new ProcessTable(notifier);
    this.surface = settings.surface ?? EXEC_SERVER_SURFACE;
    this.session = this.surface.open(notifier);
    this.scheduler = new RequestScheduler(settings.scheduler, (running) => this.unsent.mayStart(running));
  }

  get inFlight(): number {
    return this.scheduler.inFlight;
  }

  get queued(): number {
    return this.scheduler.queued;
  }

  get openHandles(): number {
    return this.handles.openCount;
  }

  /** One framed message from the transport. */
  receive(raw: Buffer | string): void {
    if (this.closed) return;
    const bytes = typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : raw.length;
    if (bytes > this.settings.maxMessageBytes) {
      this.receiveOversized(bytes);
      return;
    }
    const parsed = parseMessage(raw, this.transport);
    if (!parsed.ok) {
      this.settings.stats.requestsTotal += 1;
      this.answerInOrder(() => this.fail(parsed.id, parsed.error));
      return;
    }
    const message = parsed.message;
    if (message.kind === 'notification') {
      // Notifications never get replies (JSON-RPC); the only one with meaning is `initialized`.
      if (message.method === HANDSHAKE_METHODS.initialized && this.state === 'initializing')
        this.state = 'ready';
      return;
    }
    this.settings.stats.requestsTotal += 1;
    this.dispatch(message.id, message.method, message.params, bytes);
  }

  /** A message over the size limit: its bytes are gone, so the reply cannot name its id. */
  receiveOversized(bytes: number): void {
    if (this.closed) return;
    this.settings.stats.requestsTotal += 1;
    this.settings.stats.requestsRejected += 1;
    const limit = this.settings.maxMessageBytes;
    this.fail(
      UNPARSABLE_ID,
      new FsError(
        'invalid_request',
        `JSON-RPC message of ${bytes} bytes exceeds the limit of ${limit} bytes`,
      ),
    );
  }

  /** The peer stopped sending but may still read: finish what was accepted, then close. */
  async drain(): Promise<void> {
    this.session.inputEnded?.();
    await this.scheduler.whenIdle();
    await this.close();
  }

  /**
   * The peer is gone: abort running broker calls (their helpers are killed) and drop the rest. The
   * promise settles once the handles' clean-up (abandoned write handles' staging files) is done.
   */
  close(): Promise<void> {
    if (this.closed) return this.cleanedUp;
    this.closed = true;
    this.scheduler.dropWaiting();
    for (const controller of this.running)
      controller.abort(new FsError('internal_error', 'connection closed'));
    this.processes.closeAll();
    this.session.close?.();
    this.cleanedUp = this.handles.closeAll();
    this.unsent.close();
    return this.cleanedUp;
  }

  private dispatch(id: RequestId, method: string, params: unknown, bytes: number): void {
    const receivedAt = Date.now();
    const started = performance.now();
    const facts: OperationFacts = { paths: [], sandboxed: null, bytesRead: 0, bytesWritten: 0 };
    const finish = (outcome: { result: unknown } | { error: unknown }) =>
      this.finish(id, method, facts, receivedAt, started, outcome);

    if (method === HANDSHAKE_METHODS.initialize) {
      this.initialize(id, params);
      return;
    }
    const handler = this.session.handlerFor(method);
    const refusal = handler ? this.refusalBeforeRunning() : this.session.methodNotFound(method);
    if (refusal || !handler) {
      this.answerInOrder(() => finish({ error: refusal }));
      return;
    }

    const controller = new AbortController();
    const admitted = this.scheduler.trySchedule({
      bytes,
      key: this.surface.orderingKey(method, params),
      run: async () => {
        if (this.closed) return;
        this.running.add(controller);
        try {
          const call = { signal: controller.signal };
          const result = await handler(params, {
            broker: this.settings.broker,
            handles: this.handles,
            processes: this.processes,
            os: currentHostOs(),
            call,
            facts,
          });
          finish({ result });
        } catch (error) {
          finish({ error });
        } finally {
          this.running.delete(controller);
        }
      },
    });
    if (!admitted) {
      this.settings.stats.requestsRejected += 1;
      const { maxInFlight, maxQueued } = this.settings.scheduler;
      finish({
        error: new FsError(
          'invalid_request',
          `too many pending requests on this connection (at most ${maxInFlight} running and ${maxQueued} queued); wait for replies before sending more`,
        ),
      });
    }
  }

  /** Why a known method may not run now: the handshake is incomplete, or the audit log broke. */
  private refusalBeforeRunning(): FsError | null {
    const gate = this.surface.handshakeError(this.state);
    if (gate) return gate;
    const auditFailure = this.settings.audit?.failure;
    // Fail closed: an operator who asked for an audit trail gets no unaudited operations.
    if (auditFailure) return new FsError('io_error', `audit log is unavailable: ${auditFailure.message}`);
    return null;
  }

  /** The handshake state changes as the message arrives; only the reply waits its turn. */
  private initialize(id: RequestId, params: unknown): void {
    if (this.state !== 'new') {
      this.answerInOrder(() => this.fail(id, this.surface.repeatedInitializeError()));
      return;
    }
    let result: unknown;
    try {
      result = this.session.initialize(params, this.settings.environment);
    } catch (error) {
      this.answerInOrder(() => this.fail(id, error));
      return;
    }
    this.state = 'initializing';
    this.answerInOrder(() => {
      this.settings.stats.requestsOk += 1;
      this.send({ id, result });
    });
  }

  /**
   * Answers that need no work (handshake, refusals, parse errors) still queue behind earlier
   * requests, so with `concurrency: 1` every reply leaves in arrival order, as the reference's do.
   * If the queue is full the answer goes out at once: it is small, and refusing it would hide it.
   */
  private answerInOrder(answer: () => void): void {
    const queued = this.scheduler.trySchedule({
      bytes: 0,
      key: null,
      run: async () => {
        if (!this.closed) answer();
      },
    });
    if (!queued) answer();
  }

  private finish(
    id: RequestId,
    method: string,
    facts: OperationFacts,
    receivedAt: number,
    started: number,
    outcome: { result: unknown } | { error: unknown },
  ): void {
    const stats = this.settings.stats;
    const errorKind = 'error' in outcome ? this.surface.wireError(outcome.error).data.errorKind : null;
    if (errorKind === null) {
      stats.requestsOk += 1;
      stats.bytesRead += facts.bytesRead;
      stats.bytesWritten += facts.bytesWritten;
    } else {
      stats.requestsFailed += 1;
    }
    this.settings.audit?.record({
      startedAt: receivedAt,
      connection: this.id,
      method: quoteBounded(method),
      paths: facts.paths,
      sandboxed: facts.sandboxed,
      errorKind,
      bytesRead: errorKind === null ? facts.bytesRead : 0,
      bytesWritten: errorKind === null ? facts.bytesWritten : 0,
      durationMs: performance.now() - started,
    });
    if ('error' in outcome) this.sendError(id, outcome.error);
    else this.send({ id, result: outcome.result });
  }

  private fail(id: RequestId, error: unknown): void {
    this.settings.stats.requestsFailed += 1;
    this.sendError(id, error);
  }

  private sendError(id: RequestId, error: unknown): void {
    this.send({ error: this.surface.wireError(error), id });
  }

  /** A notification (process output and exits): held against the same unsent budget as replies. */
  private sendNotification(method: string, params: object): void {
    if (this.closed) return;
    const whole = Buffer.from(JSON.stringify(this.surface.notification(method, params)), 'utf8');
    this.output.send([whole], this.unsent.hold(whole.length));
  }

  private send(reply: Reply): void {
    if (this.closed) return;
    let encoded: EncodedReply;
    try {
      encoded = encodeReplyParts(reply);
    } catch (error) {
      // A result that cannot be serialised is our bug; the client still gets an answer for its id.
      encoded = encodeReplyParts({ error: this.surface.wireError(error), id: reply.id });
    }
    this.output.send(encoded.parts, this.unsent.hold(encoded.bytes));
  }
}
