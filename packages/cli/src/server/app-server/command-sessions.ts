import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type CommandLaunchSpec, CommandProcess, type CommandStream } from '@fs-sandbox/broker/internal';
import {
  type AppNotification,
  type AppParams,
  type AppResult,
  base64Problem,
  encodeTerminalFrame,
  FsError,
  type HostOs,
  isFsError,
  LIMITS,
  narrowContext,
  nativeToPathUri,
  parseSandboxContext,
  type SandboxContextInput,
  TERMINAL_FRAME,
  terminalInputFrames,
} from '@fs-sandbox/policy';
import type { SessionNotifier } from '../surface.js';
import type { AppServerSettings } from './app-server-settings.js';

/**
 * process/spawn and command/exec on one connection. Both start their command through the broker's
 * one command launch (`prepareCommand`, the same as exec-server process/start and `fs-sandbox run`),
 * under the server's policy: process/spawn under it as it is (the reference runs it bare, as the
 * server's user), command/exec under it narrowed by the request's own `sandboxPolicy` or
 * `permissionProfile` (request-policy.ts). The rest follows the reference:
 *
 * - ids are the client's and per connection; an id is taken while its process runs and free again
 *   once it exited (a buffered command/exec without `processId` gets an internal one);
 * - output is captured per stream up to `outputBytesCap` (1 MiB unless given; null: no cap), either
 *   streamed as `…/outputDelta` notifications (the last one of a capped stream says `capReached`)
 *   or buffered into the exit (process/exited, or command/exec's deferred reply); output past a cap
 *   is still read and dropped, so the command never blocks on a full pipe;
 * - a timeout (10 s unless given; null: none) kills the process tree and reports exit code 124, a
 *   kill or terminate 137;
 * - the exit is reported once both output pipes ended, or 2 s after it with `outputDrainTimedOut`;
 * - `tty: true` runs the command on a pseudo-terminal allocated inside the sandbox (stdout and
 *   stderr are then one stream, stdout), which implies streamed stdin and output;
 * - closing the connection kills every process it started.
 */

type Kind = 'process' | 'command';

interface StreamCapture {
  bytes: number;
  chunks: Buffer[];
  capReached: boolean;
}

interface Session {
  readonly key: string;
  readonly kind: Kind;
  /** The client's id (null for a buffered command/exec without one). */
  readonly id: string | null;
  readonly tty: boolean;
  readonly streamStdin: boolean;
  readonly streamOutput: boolean;
  readonly cap: number | null;
  command: CommandProcess | null;
  killRequested: boolean;
  timedOut: boolean;
  timer: NodeJS.Timeout | null;
  readonly output: Record<CommandStream, StreamCapture>;
  /** command/exec's reply, resolved at exit. */
  finished?: (result: AppResult<'command/exec'>) => void;
}

/** Output kept for an exit report when the request disabled the cap: still bounded. */
const UNCAPPED_BUFFER_BYTES = 64 * 1024 * 1024;

/** The reference's exit codes for a process it ended. */
const TIMED_OUT_EXIT_CODE = 124;

/**
 * How long output may still be read after the exit, as the reference's: in the sandbox nothing
 * outlives the command (its pid namespace dies with it), so this deadline is met unless a process
 * cannot be killed at once (a read blocked in the kernel on a hung file system).
 */
const OUTPUT_DRAIN_TIMEOUT_MS = 2_000;

/** A terminal's size when the request names none, as the reference's. */
const DEFAULT_TERMINAL = { rows: 24, cols: 80 };

export class CommandSessions {
  private readonly sessions = new Map<string, Session>();
  private nextInternalId = 1;
  private closed = false;

  constructor(
    private readonly settings: AppServerSettings,
    private readonly os: HostOs,
    private readonly notifier: SessionNotifier<AppNotification>,
  ) {}

  async spawn(params: AppParams<'process/spawn'>): Promise<AppResult<'process/spawn'>> {
    if (params.command.length === 0) throw new FsError('invalid_request', 'command must not be empty');
    if (params.processHandle === '') throw new FsError('invalid_request', 'processHandle must not be empty');
    if (params.size != null && !params.tty)
      throw new FsError('invalid_params', 'process/spawn size requires tty: true');
    const timeoutMs = timeoutOf('process/spawn', params.timeoutMs, false);
    const size = params.size == null ? null : terminalSize('process', params.size);
    const session = this.reserve('process', params.processHandle, {
      tty: params.tty,
      streamStdin: params.tty || params.streamStdin,
      streamOutput: params.tty || params.streamStdoutStderr,
      cap: params.outputBytesCap === undefined ? LIMITS.v2DefaultOutputBytesCap : params.outputBytesCap,
    });
    await this.start(session, this.settings.context, {
      argv: params.command,
      cwd: params.cwd,
      env: params.env ?? null,
      terminal: params.tty ? (size ?? DEFAULT_TERMINAL) : null,
      timeoutMs,
    });
    return {};
  }

  async exec(
    params: AppParams<'command/exec'>,
    experimentalApi: boolean,
  ): Promise<AppResult<'command/exec'>> {
    if (params.permissionProfile != null && !experimentalApi) {
      throw new FsError(
        'invalid_request',
        'command/exec.permissionProfile requires experimentalApi capability',
      );
    }
    if (params.command.length === 0) throw new FsError('invalid_request', 'command must not be empty');
    if (params.sandboxPolicy != null && params.permissionProfile != null) {
      throw new FsError('invalid_request', '`permissionProfile` cannot be combined with `sandboxPolicy`');
    }
    if (params.size != null && !params.tty)
      throw new FsError('invalid_params', 'command/exec size requires tty: true');
    if (params.disableOutputCap && params.outputBytesCap != null)
      throw new FsError('invalid_params', 'command/exec cannot set both outputBytesCap and disableOutputCap');
    if (params.disableTimeout && params.timeoutMs != null)
      throw new FsError('invalid_params', 'command/exec cannot set both timeoutMs and disableTimeout');
    const cwd = params.cwd == null ? this.settings.cwd : resolve(this.settings.cwd, params.cwd);
    const timeoutMs = timeoutOf('command/exec', params.timeoutMs ?? undefined, params.disableTimeout);
    const context = this.narrowed(params, cwd);
    const size = params.size == null ? null : terminalSize('command', params.size);
    if (params.processId == null && (params.tty || params.streamStdin || params.streamStdoutStderr)) {
      throw new FsError(
        'invalid_request',
        'command/exec tty or streaming requires a client-supplied processId',
      );
    }
    const session = this.reserve('command', params.processId ?? null, {
      tty: params.tty,
      streamStdin: params.tty || params.streamStdin,
      streamOutput: params.tty || params.streamStdoutStderr,
      cap: params.disableOutputCap ? null : (params.outputBytesCap ?? LIMITS.v2DefaultOutputBytesCap),
    });
    const finished = new Promise<AppResult<'command/exec'>>((done) => {
      session.finished = done;
    });
    await this.start(session, context, {
      argv: params.command,
      cwd,
      env: params.env ?? null,
      terminal: params.tty ? (size ?? DEFAULT_TERMINAL) : null,
      timeoutMs,
    });
    return finished;
  }

  writeStdin(
    kind: Kind,
    params: { deltaBase64?: string | null | undefined; closeStdin: boolean } & (
      | { processHandle: string }
      | { processId: string }
    ),
  ): Record<string, never> {
    const id = 'processHandle' in params ? params.processHandle : params.processId;
    if (params.deltaBase64 == null && !params.closeStdin) {
      const method = kind === 'process' ? 'process/writeStdin' : 'command/exec/write';
      throw new FsError('invalid_params', `${method} requires deltaBase64 or closeStdin`);
    }
    let delta = Buffer.alloc(0);
    if (params.deltaBase64 != null) {
      const problem = base64Problem(params.deltaBase64);
      if (problem !== null) throw new FsError('invalid_params', `invalid deltaBase64: ${problem}`);
      delta = Buffer.from(params.deltaBase64, 'base64');
    }
    const session = this.active(kind, id);
    if (!session.streamStdin) {
      throw new FsError(
        'invalid_request',
        `stdin streaming is not enabled for this ${kind === 'process' ? 'process' : 'command/exec'}`,
      );
    }
    const command = this.running(session);
    for (const part of session.tty ? terminalInputFrames(delta) : delta.length > 0 ? [delta] : []) {
      if (command.write(part) === 'stdinClosed')
        throw new FsError('invalid_request', 'stdin is already closed');
    }
    if (params.closeStdin) {
      if (session.tty) command.write(encodeTerminalFrame(TERMINAL_FRAME.endOfInput, Buffer.alloc(0)));
      else command.closeStdin();
    }
    return {};
  }

  resize(kind: Kind, id: string, size: { rows: number; cols: number }): Record<string, never> {
    const { rows, cols } = terminalSize(kind, size);
    const session = this.active(kind, id);
    const command = this.running(session);
    if (!session.tty)
      throw new FsError('invalid_request', 'failed to resize PTY: process is not attached to a PTY');
    const bytes = Buffer.alloc(4);
    bytes.writeUInt16BE(rows, 0);
    bytes.writeUInt16BE(cols, 2);
    command.write(encodeTerminalFrame(TERMINAL_FRAME.resize, bytes));
    return {};
  }

  terminate(kind: Kind, id: string): Record<string, never> {
    const session = this.active(kind, id);
    session.killRequested = true;
    session.command?.kill();
    return {};
  }

  resumeOutput(): void {
    if (!this.notifier.hasRoom()) return;
    for (const session of this.sessions.values()) session.command?.resume();
  }

  closeAll(): void {
    this.closed = true;
    for (const session of this.sessions.values()) {
      if (session.timer !== null) clearTimeout(session.timer);
      session.killRequested = true;
      session.command?.kill();
    }
  }

  private narrowed(params: AppParams<'command/exec'>, cwd: string): SandboxContextInput {
    return narrowContext(
      this.settings.context,
      { sandboxPolicy: params.sandboxPolicy, permissionProfile: params.permissionProfile },
      {
        os: this.os,
        serverCwd: this.settings.cwd,
        commandCwd: cwd,
        tmpdir: this.settings.env.TMPDIR ?? null,
        requireSandbox: this.settings.requireSandbox,
        realPath: realPathOrNull,
      },
    );
  }

  private reserve(
    kind: Kind,
    id: string | null,
    shape: Pick<Session, 'tty' | 'streamStdin' | 'streamOutput' | 'cap'>,
  ): Session {
    if (this.closed) throw new FsError('internal_error', 'connection closed');
    const key = id === null ? `${kind}#${this.nextInternalId++}` : `${kind}:${id}`;
    if (this.sessions.has(key)) {
      throw new FsError(
        'invalid_request',
        kind === 'process'
          ? `duplicate active process handle: ${JSON.stringify(id)}`
          : `duplicate active command/exec process id: ${JSON.stringify(id)}`,
      );
    }
    if (this.sessions.size >= LIMITS.processesPerConnection) {
      throw new FsError(
        'invalid_request',
        `too many processes on this connection (at most ${LIMITS.processesPerConnection} running); wait for one to exit`,
      );
    }
    const session: Session = {
      key,
      kind,
      id,
      ...shape,
      command: null,
      killRequested: false,
      timedOut: false,
      timer: null,
      output: { stdout: emptyCapture(), stderr: emptyCapture() },
    };
    this.sessions.set(key, session);
    return session;
  }

  private async start(
    session: Session,
    context: SandboxContextInput,
    request: {
      argv: string[];
      cwd: string;
      env: Record<string, string | null> | null;
      terminal: { rows: number; cols: number } | null;
      timeoutMs: number | null;
    },
  ): Promise<void> {
    let launch: CommandLaunchSpec;
    try {
      await this.assertCwdExists(context, request.cwd);
      const env = request.env ?? {};
      launch = await this.settings.broker.prepareCommand(parseSandboxContext(context), {
        argv: request.argv,
        cwd: request.cwd,
        env: Object.fromEntries(
          Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== null),
        ),
        envPolicy: {
          inherit: 'core',
          ignoreDefaultExcludes: false,
          exclude: Object.keys(env).filter((name) => env[name] === null),
          set: {},
          includeOnly: [],
        },
        terminal: request.terminal,
      });
      session.command = await CommandProcess.start(
        launch,
        session.streamStdin ? 'pipe' : 'ignore',
        {
          output: (stream, chunk) => this.onOutput(session, stream, chunk),
          exit: (exitCode, drainTimedOut) => this.onExit(session, exitCode, drainTimedOut),
          closed: () => undefined,
          network: (event) => this.notifier.network?.(session.id ?? session.key, event),
        },
        { drainTimeoutMs: OUTPUT_DRAIN_TIMEOUT_MS },
      );
    } catch (error) {
      this.sessions.delete(session.key);
      throw spawnFailure(error, session.kind);
    }
    if (session.killRequested || this.closed) session.command.kill();
    if (!this.notifier.hasRoom()) session.command.pause();
    if (request.timeoutMs !== null) {
      session.timer = setTimeout(
        () => {
          session.timedOut = true;
          session.command?.kill();
        },
        Math.min(request.timeoutMs, 2 ** 31 - 1),
      );
    }
  }

  /**
   * A cwd the policy shows that is missing or not a directory fails as the reference's spawn does
   * (-32603 "failed to spawn …" with the OS's words). One the policy does not show is left to the
   * launch, which refuses it as the policy's (-32600) whether or not it exists, so the error says
   * nothing about a path outside the policy.
   */
  private async assertCwdExists(context: SandboxContextInput, cwd: string): Promise<void> {
    let problem: string | null = null;
    try {
      if (!statSync(cwd).isDirectory()) problem = 'Not a directory';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') problem = 'No such file or directory';
      else if (code === 'ENOTDIR') problem = 'Not a directory';
    }
    if (problem === null) return;
    const { access } = await this.settings.broker.explainAccess({
      path: nativeToPathUri(cwd, this.os),
      sandbox: context,
    });
    if (access !== 'none')
      throw new FsError('not_found', `cwd ${cwd}: ${problem}`, { kind: 'spawnNotFound' });
  }

  private onOutput(session: Session, stream: CommandStream, chunk: Buffer): void {
    const capture = session.output[stream];
    if (capture.capReached) return;
    const bound = session.cap ?? (session.streamOutput ? null : UNCAPPED_BUFFER_BYTES);
    const kept = bound === null ? chunk : chunk.subarray(0, Math.max(0, bound - capture.bytes));
    capture.bytes += kept.length;
    capture.capReached = bound !== null && capture.bytes >= bound;
    if (session.streamOutput) {
      if (session.id !== null && !this.closed && (kept.length > 0 || capture.capReached)) {
        const delta = { stream, deltaBase64: kept.toString('base64'), capReached: capture.capReached };
        if (session.kind === 'process')
          this.notifier.notify('process/outputDelta', { processHandle: session.id, ...delta });
        else this.notifier.notify('command/exec/outputDelta', { processId: session.id, ...delta });
        if (!this.notifier.hasRoom()) for (const other of this.sessions.values()) other.command?.pause();
      }
    } else {
      capture.chunks.push(kept);
    }
  }

  private onExit(session: Session, code: number, drainTimedOut: boolean): void {
    if (session.timer !== null) clearTimeout(session.timer);
    this.sessions.delete(session.key);
    const exitCode = session.timedOut ? TIMED_OUT_EXIT_CODE : code;
    const text = (stream: CommandStream) => Buffer.concat(session.output[stream].chunks).toString('utf8');
    if (session.kind === 'command') {
      session.finished?.({ exitCode, stdout: text('stdout'), stderr: text('stderr') });
      return;
    }
    // A process always has its handle (only a buffered command/exec runs without an id).
    if (this.closed || session.id === null) return;
    this.notifier.notify('process/exited', {
      processHandle: session.id,
      exitCode,
      outputDrainTimedOut: drainTimedOut,
      stdout: text('stdout'),
      stdoutCapReached: session.output.stdout.capReached,
      stderr: text('stderr'),
      stderrCapReached: session.output.stderr.capReached,
    });
  }

  private active(kind: Kind, id: string): Session {
    const session = this.sessions.get(`${kind}:${id}`);
    if (session === undefined) {
      throw new FsError(
        'invalid_request',
        kind === 'process'
          ? `no active process for process handle ${JSON.stringify(id)}`
          : `no active command/exec for process id ${JSON.stringify(id)}`,
      );
    }
    return session;
  }

  private running(session: Session): CommandProcess {
    if (session.command === null || !session.command.running) {
      const what = session.kind === 'process' ? 'process' : 'command/exec';
      throw new FsError('invalid_request', `${what} ${JSON.stringify(session.id)} is no longer running`);
    }
    return session.command;
  }
}

function realPathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function emptyCapture(): StreamCapture {
  return { bytes: 0, chunks: [], capReached: false };
}

/** A double-option timeout: absent is the default, null (or `disableTimeout`) none. */
function timeoutOf(method: string, timeoutMs: number | null | undefined, disabled: boolean): number | null {
  if (disabled || timeoutMs === null) return null;
  if (timeoutMs === undefined) return LIMITS.v2DefaultTimeoutMs;
  if (timeoutMs < 0)
    throw new FsError('invalid_params', `${method} timeoutMs must be non-negative, got ${timeoutMs}`);
  return timeoutMs;
}

function terminalSize(kind: Kind, size: { rows: number; cols: number }): { rows: number; cols: number } {
  if (size.rows === 0 || size.cols === 0) {
    const subject = kind === 'process' ? 'process size' : 'command/exec size';
    throw new FsError('invalid_params', `${subject} rows and cols must be greater than 0`);
  }
  return size;
}

/**
 * A start that failed. A program that does not exist or cannot run is the reference's -32603
 * "failed to spawn …" (the typed kind stays in `data`); a policy refusal keeps its own error.
 */
function spawnFailure(error: unknown, kind: Kind): unknown {
  if (!isFsError(error)) return error;
  const spawnKind = error.extra?.kind;
  if (typeof spawnKind !== 'string' || !spawnKind.startsWith('spawn')) return error;
  const what = kind === 'process' ? 'process' : 'command';
  return new FsError('io_error', `failed to spawn ${what}: ${error.message}`, {
    ...error.extra,
    spawnKind: error.kind,
  });
}
