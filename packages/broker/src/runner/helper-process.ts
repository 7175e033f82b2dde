import type { Readable, Writable } from 'node:stream';
import { encodeRequest, type HelperReply, type HelperRequest } from '@fs-sandbox/helper';
import { FsError, LIMITS, parseProgressLine, type TreeProgress } from '@fs-sandbox/policy/core';
import type { LaunchSpec } from '../backends/backend.js';
import { launchFailure } from './launch-failure.js';
import { ReplyReader } from './reply-reader.js';
import { spawnLaunch } from './spawn-launch.js';

/**
 * What a helper run needs of its started launch: node's ChildProcess (spawnLaunch), or the warm
 * pool's stand-in for one its spawner process started (pool/spawner.ts).
 */
export interface HelperChild {
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  kill(signal?: NodeJS.Signals | number): boolean;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  ref(): void;
  unref(): void;
}

export interface RunHelperOptions {
  /** Aborting kills the helper's process tree; the call rejects with `internal_error`. */
  signal?: AbortSignal;
  /** Run time before the whole process tree is killed (`timeout`); defaults to LIMITS.helperTimeoutMs. */
  timeoutMs?: number;
  /** Largest accepted stdout; defaults to LIMITS.helperMaxReplyBytes. */
  maxReplyBytes?: number;
  /** Told what a long tree operation reports of its progress (the request must ask for it). */
  onProgress?: (progress: TreeProgress) => void;
  /** Called once the request is written to the helper's stdin (the speculative read waits for it). */
  onSent?: () => void;
}

/**
 * One helper process, started now and given its one request now (a cold run) or later (a warm
 * one, spawned ahead and blocked reading stdin). This is the only place the broker spawns helpers.
 *
 * Detached: the helper (and anything it starts) gets its own process group, so a timeout, a cancel
 * or the pool's clean-up kills the whole tree with one signal. Under bwrap, --die-with-parent and
 * the pid namespace also take the sandboxed processes down with the launcher, and the launcher
 * down with the broker if the broker is SIGKILLed.
 */
export class HelperProcess {
  private readonly child: HelperChild;
  private readonly stderr = new HelperStderr(LIMITS.helperMaxStderrBytes);
  private reader: ReplyReader | null = null;
  private spawnError: Error | null = null;
  /** Set when the broker decides the run failed; the call rejects with this once the process is gone. */
  private failure: FsError | null = null;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exitListeners: Array<() => void> = [];
  private started = false;
  private onReplyComplete: (() => void) | null = null;

  private constructor(
    private readonly launch: LaunchSpec,
    start: (launch: LaunchSpec) => HelperChild,
  ) {
    this.child = start(launch);
    this.child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    // EPIPE when the helper exits before reading all of stdin: its exit status says what happened.
    this.child.stdin?.on('error', () => {});
    this.child.on('error', (error) => {
      // Only a failed spawn has no pid; other errors (a failed kill) are followed by 'close'.
      if (this.child.pid === undefined) {
        this.spawnError = error;
        this.markExited(null, null);
      }
    });
    this.child.on('close', (code, signal) => this.markExited(code, signal));
  }

  static start(launch: LaunchSpec, start: (launch: LaunchSpec) => HelperChild = spawnLaunch): HelperProcess {
    return new HelperProcess(launch, start);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** False once the process is gone (or never started): it can no longer take a request. */
  get alive(): boolean {
    return this.exit === null && this.failure === null;
  }

  /** Called once when the process is gone, whether it ran a request or died waiting. */
  onExit(listener: () => void): void {
    if (this.exit !== null) listener();
    else this.exitListeners.push(listener);
  }

  /**
   * While a warm helper waits, nothing of it may keep the broker's event loop alive: a library user
   * who never calls close() must still see the process end (the exit hook then kills the helper).
   */
  setReferenced(referenced: boolean): void {
    const handles = [this.child, this.child.stdin, this.child.stdout, this.child.stderr];
    for (const handle of handles) {
      const refable = handle as { ref?: () => void; unref?: () => void } | null;
      if (referenced) refable?.ref?.();
      else refable?.unref?.();
    }
  }

  /** Kills the whole process tree (idempotent); a run in progress rejects with `error`. */
  kill(error: FsError = new FsError('internal_error', 'the helper was stopped')): void {
    if (this.failure === null) this.failure = error;
    if (this.exit !== null) return;
    // Whoever kills it may wait for its exit (the pool's close does): keep the loop alive until then.
    this.setReferenced(true);
    const pid = this.child.pid;
    try {
      // The negative pid names the process group created by `detached`. No pid yet: a spawn that
      // failed (nothing to kill), or one the pool's spawner has not answered (killed on its answer).
      if (pid === undefined) this.child.kill('SIGKILL');
      else process.kill(-pid, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
    // bwrap's sandboxed child dies with it only once it has armed --die-with-parent: one killed in
    // the instant before is orphaned, blocked reading its request. Its stdin closed, it reads
    // end-of-file and exits, so it neither stays behind nor holds its stdout open forever.
    this.child.stdin?.destroy();
  }

  /**
   * Hands the helper its one request. By default the reply counts once the process has exited with
   * status 0. With `settle: 'reply'` (warm helpers) it counts as soon as it is complete: the helper
   * exits 0 whenever it wrote a whole reply, and waiting for node and bwrap to tear down would
   * double a warm call's latency. The process stays tracked and is killed at the timeout.
   */
  run(
    request: HelperRequest,
    options: RunHelperOptions,
    settle: 'exit' | 'reply' = 'exit',
  ): Promise<HelperReply> {
    if (this.started) return Promise.reject(new FsError('internal_error', 'a helper runs one request only'));
    this.started = true;
    this.setReferenced(true);
    if (options.signal?.aborted) {
      this.kill(cancelled());
      return Promise.reject(cancelled());
    }
    const reader = new ReplyReader(options.maxReplyBytes ?? LIMITS.helperMaxReplyBytes);
    this.reader = reader;
    if (options.onProgress) this.stderr.onProgress = options.onProgress;
    const timeoutMs = options.timeoutMs ?? LIMITS.helperTimeoutMs;
    return new Promise<HelperReply>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => HelperReply) => {
        if (settled) return;
        settled = true;
        options.signal?.removeEventListener('abort', onAbort);
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      };
      const stop = (error: FsError) => {
        this.kill(error);
        // One the pool's spawner has not answered yet is killed on its answer, and its exit comes
        // only then: a spawner that does not answer (stopped, starved) must not hold the call.
        if (this.child.pid === undefined) finish(() => this.outcome());
      };
      const timer = setTimeout(
        () =>
          stop(
            new FsError(
              'timeout',
              `helper did not finish within ${timeoutMs} ms; its process tree was killed`,
            ),
          ),
        timeoutMs,
      );
      const onAbort = () => stop(cancelled());
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (settle === 'reply') this.onReplyComplete = () => finish(() => reader.finish());
      this.onExit(() => {
        clearTimeout(timer);
        finish(() => this.outcome());
      });
      if (this.exit === null && this.child.stdin) {
        // One JSON line; a write's bytes follow it raw (binary framing), never base64 again.
        for (const part of encodeRequest(request)) this.child.stdin.write(part);
        this.child.stdin.end();
        options.onSent?.();
      }
    });
  }

  private outcome(): HelperReply {
    if (this.spawnError !== null) {
      throw new FsError(
        'sandbox_unavailable',
        `cannot start ${this.launch.sandboxProgram}: ${this.spawnError.message}`,
      );
    }
    if (this.failure !== null) throw this.failure;
    const exit = this.exit as { code: number | null; signal: NodeJS.Signals | null };
    if (exit.code !== 0) throw launchFailure(this.launch, exit.code, exit.signal, this.stderr.text());
    return (this.reader as ReplyReader).finish();
  }

  private onStdout(chunk: Buffer): void {
    if (this.failure !== null) return;
    if (this.reader === null) {
      // A helper speaks only after its request; output before it means it is not our helper.
      this.kill(new FsError('internal_error', 'helper wrote to stdout before it was given a request'));
      return;
    }
    try {
      this.reader.push(chunk);
    } catch (error) {
      this.kill(error as FsError);
      return;
    }
    if (this.reader.complete) this.onReplyComplete?.();
  }

  private markExited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exit !== null) return;
    this.exit = { code, signal };
    for (const listener of this.exitListeners.splice(0)) listener();
  }
}

/** The error of a run the caller cancelled (also before anything was spawned). */
export function cancelled(): FsError {
  return new FsError('internal_error', 'operation cancelled; the helper process tree was killed');
}

/** Longest stderr line looked at as a progress line; anything longer is plain output. */
const MAX_PROGRESS_LINE = 64;

/**
 * The helper's stderr: progress lines (policy tree-progress.ts) go to the listener, the rest is
 * output whose first bytes (where the cause is) are kept for error messages, and the rest drained
 * and dropped. Only whole short lines can be progress, so a crash's output is never lost to it.
 */
class HelperStderr {
  onProgress: ((progress: TreeProgress) => void) | null = null;
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private partial = '';

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    let text = this.partial + chunk.toString('latin1');
    this.partial = '';
    let newline = text.indexOf('\n');
    while (newline !== -1 && newline <= MAX_PROGRESS_LINE) {
      const progress = parseProgressLine(text.slice(0, newline));
      if (progress === null) break;
      this.onProgress?.(progress);
      text = text.slice(newline + 1);
      newline = text.indexOf('\n');
    }
    if (
      newline === -1 &&
      text.length <= MAX_PROGRESS_LINE &&
      text.startsWith('fs-sandbox:'.slice(0, text.length))
    ) {
      // Perhaps the start of a progress line cut by the pipe: decided when the rest arrives.
      this.partial = text;
      return;
    }
    this.keep(Buffer.from(text, 'latin1'));
  }

  private keep(chunk: Buffer): void {
    const room = this.maxBytes - this.size;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    this.chunks.push(new Uint8Array(kept.buffer, kept.byteOffset, kept.byteLength));
    this.size += kept.byteLength;
  }

  text(): string {
    return Buffer.concat(this.chunks, this.size).toString('utf8') + this.partial;
  }
}
