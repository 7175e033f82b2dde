import {
  type CommandLaunchSpec,
  CommandProcess,
  type CommandStream,
  type NetworkEvent,
  OutputCap,
} from '@fs-sandbox/broker/internal';
import {
  type ExecServerNotification,
  encodeTerminalFrame,
  FsError,
  LIMITS,
  TERMINAL_FRAME,
  terminalInputFrames,
  type WireResultOf,
} from '@fs-sandbox/policy';

/** How the table reaches its client: notifications, and whether the unsent output still has room. */
export interface ProcessNotifier {
  notify<N extends keyof ExecServerNotification>(method: N, params: ExecServerNotification[N]): void;
  /** False while the connection's unsent notifications exceed LIMITS.processUnsentOutputBytes. */
  hasRoom(): boolean;
  /** A network connection a command made through the broker (for the audit log). */
  network?(processId: string, event: NetworkEvent): void;
}

export interface StartOptions {
  processId: string;
  launch: CommandLaunchSpec;
  pipeStdin: boolean;
  /**
   * The launch runs the command on a terminal (`prepareCommand`'s `terminal`): its stdin is then
   * always writable, as the reference's, and carries the launcher's frames.
   */
  tty: boolean;
  outputBytesCap: number | null;
  timeoutMs: number | null;
}

/** `pty`: a terminal's one stream (its stdout and the launcher's stderr alike), as the reference names it. */
type OutputStream = CommandStream | 'pty';

interface RetainedChunk {
  seq: number;
  stream: OutputStream;
  chunk: Buffer;
}

/** One process id's state: live, then exited (kept for process/read until the id is reused). */
class ProcessEntry {
  seq = 0;
  command: CommandProcess | null = null;
  exitCode: number | null = null;
  closed = false;
  timedOut = false;
  retained: RetainedChunk[] = [];
  retainedBytes = 0;
  timer: NodeJS.Timeout | null = null;
  waiters = new Set<() => void>();

  readonly cap: OutputCap;

  constructor(
    readonly id: string,
    outputBytesCap: number | null,
    readonly tty: boolean,
  ) {
    this.cap = new OutputCap(outputBytesCap);
  }

  get exited(): boolean {
    return this.exitCode !== null;
  }

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/**
 * The processes of one connection. Ids are the client's: a live id cannot be started again, an
 * exited one can (the new process replaces what was kept of the old). Every process is killed when
 * the connection closes. Output goes out as `process/output` notifications as it arrives, up to
 * `outputBytesCap` (then `capReached`), and the last LIMITS.processRetainedOutputBytes of it stay for
 * process/read.
 */
export class ProcessTable {
  private readonly entries = new Map<string, ProcessEntry>();
  private closed = false;

  constructor(private readonly notifier: ProcessNotifier) {}

  get liveCount(): number {
    return [...this.entries.values()].filter((entry) => !entry.closed).length;
  }

  /** Refuses an id in use and a full table before the caller prepares a sandbox. */
  reserve(processId: string): void {
    if (this.closed) throw new FsError('internal_error', 'connection closed');
    const existing = this.entries.get(processId);
    if (existing !== undefined && !existing.closed)
      throw new FsError('invalid_request', `process ${processId} already exists`);
    if (this.liveCount >= LIMITS.processesPerConnection) {
      throw new FsError(
        'invalid_request',
        `too many processes on this connection (at most ${LIMITS.processesPerConnection} running); wait for one to exit`,
      );
    }
    const entry = new ProcessEntry(processId, null, false);
    this.entries.set(processId, entry);
  }

  /** Forgets a reservation whose start failed, so the id is free again. */
  release(processId: string): void {
    const entry = this.entries.get(processId);
    if (entry !== undefined && entry.command === null) this.entries.delete(processId);
  }

  async start(options: StartOptions): Promise<void> {
    const entry = new ProcessEntry(options.processId, options.outputBytesCap, options.tty);
    this.entries.set(options.processId, entry);
    const stdin = options.pipeStdin || options.tty ? 'pipe' : 'ignore';
    try {
      entry.command = await CommandProcess.start(options.launch, stdin, {
        output: (stream, chunk) => this.onOutput(entry, options.tty ? 'pty' : stream, chunk),
        exit: (exitCode) => this.onExit(entry, exitCode),
        closed: () => this.onClosed(entry),
        network: (event) => this.notifier.network?.(options.processId, event),
      });
    } catch (error) {
      this.entries.delete(options.processId);
      throw error;
    }
    if (this.closed) entry.command.kill();
    if (!this.notifier.hasRoom()) entry.command.pause();
    if (options.timeoutMs !== null) {
      entry.timer = setTimeout(() => {
        entry.timedOut = true;
        entry.command?.kill();
      }, options.timeoutMs);
    }
  }

  async read(
    processId: string,
    afterSeq: number,
    maxBytes: number | null,
    waitMs: number,
  ): Promise<WireResultOf<'process/read'>> {
    const entry = this.existing(processId);
    const pending = () => entry.retained.filter((chunk) => chunk.seq > afterSeq);
    if (pending().length === 0 && !entry.closed && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          entry.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        entry.waiters.add(done);
      });
    }
    const chunks: WireResultOf<'process/read'>['chunks'] = [];
    let bytes = 0;
    // Past every event so far (output, exit, close), as the reference counts, unless maxBytes
    // left chunks for the next read.
    let nextSeq = entry.seq + 1;
    for (const chunk of pending()) {
      if (maxBytes !== null && chunks.length > 0 && bytes + chunk.chunk.length > maxBytes) {
        nextSeq = chunk.seq;
        break;
      }
      chunks.push({ seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk.toString('base64') });
      bytes += chunk.chunk.length;
    }
    return {
      chunks,
      nextSeq,
      exited: entry.exited,
      exitCode: entry.exitCode,
      closed: entry.closed,
      failure: null,
      sandboxDenied: false,
      capReached: entry.cap.reached,
      timedOut: entry.timedOut,
    };
  }

  /** Queues `bytes` for the command's stdin, then (with `closeStdin`) ends it. */
  write(processId: string, bytes: Buffer, closeStdin = false): WireResultOf<'process/write'> {
    const entry = this.entries.get(processId);
    if (entry === undefined) return { status: 'unknownProcess' };
    const { command } = entry;
    if (command === null) return { status: 'starting' };
    if (!entry.tty) {
      const status = command.write(bytes);
      if (closeStdin && status === 'accepted') command.closeStdin();
      return { status };
    }
    // A terminal's input travels in the launcher's frames, and its end is the terminal's
    // end-of-file character (^D), as a terminal's user ends it: the launcher's pipe stays open.
    const frames = terminalInputFrames(bytes);
    if (closeStdin) frames.push(encodeTerminalFrame(TERMINAL_FRAME.endOfInput, Buffer.alloc(0)));
    for (const frame of frames.length > 0 ? frames : [bytes])
      if (command.write(frame) === 'stdinClosed') return { status: 'stdinClosed' };
    return { status: 'accepted' };
  }

  /** Kills the process tree; `running` says whether it was still running. */
  terminate(processId: string): WireResultOf<'process/terminate'> {
    const command = this.entries.get(processId)?.command;
    if (command == null || !command.running) return { running: false };
    command.kill();
    return { running: true };
  }

  /** SIGINT to a running process; an unknown or finished id is ignored, as the reference does. */
  interrupt(processId: string): void {
    this.entries.get(processId)?.command?.interrupt();
  }

  /** The client read some notifications: commands paused for it may go on. */
  resumeOutput(): void {
    if (!this.notifier.hasRoom()) return;
    for (const entry of this.entries.values()) entry.command?.resume();
  }

  /** The connection is gone: every process is killed, nothing more is sent. */
  closeAll(): void {
    this.closed = true;
    for (const entry of this.entries.values()) {
      if (entry.timer !== null) clearTimeout(entry.timer);
      entry.command?.kill();
      entry.wake();
    }
  }

  private existing(processId: string): ProcessEntry {
    const entry = this.entries.get(processId);
    if (entry === undefined) throw new FsError('invalid_request', `unknown process id ${processId}`);
    return entry;
  }

  private onOutput(entry: ProcessEntry, stream: OutputStream, data: Buffer): void {
    if (entry.cap.reached) return;
    const chunk = entry.cap.take(data);
    entry.seq += 1;
    entry.retained.push({ seq: entry.seq, stream, chunk });
    entry.retainedBytes += chunk.length;
    while (entry.retainedBytes > LIMITS.processRetainedOutputBytes && entry.retained.length > 1) {
      entry.retainedBytes -= (entry.retained.shift() as RetainedChunk).chunk.length;
    }
    this.send('process/output', {
      processId: entry.id,
      seq: entry.seq,
      stream,
      chunk: chunk.toString('base64'),
      // Present only once the cap cut the output, as the reference writes it.
      ...(entry.cap.reached ? { capReached: true } : {}),
    });
    if (!this.notifier.hasRoom()) for (const other of this.entries.values()) other.command?.pause();
    entry.wake();
  }

  private onExit(entry: ProcessEntry, exitCode: number): void {
    if (entry.timer !== null) clearTimeout(entry.timer);
    entry.exitCode = exitCode;
    entry.seq += 1;
    this.send('process/exited', {
      processId: entry.id,
      seq: entry.seq,
      exitCode,
      sandboxDenied: false,
      ...(entry.timedOut ? { timedOut: true } : {}),
    });
    entry.wake();
  }

  private onClosed(entry: ProcessEntry): void {
    entry.closed = true;
    entry.seq += 1;
    this.send('process/closed', { processId: entry.id, seq: entry.seq });
    entry.wake();
  }

  private send<N extends keyof ExecServerNotification>(method: N, params: ExecServerNotification[N]): void {
    if (!this.closed) this.notifier.notify(method, params);
  }
}
