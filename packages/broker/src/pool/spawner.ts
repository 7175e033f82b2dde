import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { LaunchSpec } from '../backends/backend.js';
import { launchCommand } from '../backends/launch-command.js';
import type { HelperChild } from '../runner/helper-process.js';
import { coveredStdio } from '../runner/inherited-masks.js';
import { spawnLaunch } from '../runner/spawn-launch.js';
import { SPAWNER_NAME, SPAWNER_PROGRAM } from './spawner-program.js';

/** What the spawner says (spawner-program.ts). */
interface SpawnerMessage {
  ready?: true;
  id?: number;
  pid?: number;
  stream?: 0 | 1 | 2;
  exit?: [number | null, NodeJS.Signals | null];
  error?: string;
}

/**
 * The pool's spawns, made by a small node process of its own (spawner-program.ts) rather than by
 * the broker's. node's spawn is synchronous: libuv forks the whole broker (page tables in
 * proportion to its memory) and waits for the exec, 5-8 ms of a bench process of 80 MB on a busy
 * 2-core machine, more in a large agent. A refill scheduled after a reply therefore blocked the
 * event loop that the caller's next awaited call runs on, and that call paid it. The spawner forks
 * from 40 MB, on its own event loop, and hands back the child's pipes over its IPC channel, so a
 * refill costs the broker one message.
 *
 * Linux only, under node (Bun's IPC passes no descriptors); until the spawner says it listens, and
 * once it is gone, spawns are the broker's own (spawnLaunch). Started by the first refill (a pool
 * never used costs nothing); the broker's inherited descriptors are covered in it as in every
 * helper; ends with close(), or on its own when the broker's process goes.
 */
/**
 * How long a spawn may go unanswered before the spawner counts as stalled (stopped, or starved of
 * CPU): a spawn takes it milliseconds. Stalled, its spawns are the broker's own again, the pool
 * hands out none of the spares it has not answered for, and the pool's close() stops waiting for
 * it (see WarmPool).
 */
export const SPAWNER_ANSWER_MS = 2_000;

export class Spawner {
  private readonly process: ChildProcess;
  private readonly children = new Map<number, RemoteChild>();
  /** When each spawn not yet answered with its pid was sent (performance.now()), oldest first. */
  private readonly unanswered = new Map<number, number>();
  private nextId = 0;
  private ready = false;
  private gone = false;
  /** Remote children the broker's event loop must stay alive for (their exit comes as a message). */
  private held = 0;

  constructor() {
    // Named, with its broker's pid, for whoever lists processes (ps; the lifecycle tests).
    this.process = spawn(process.execPath, ['-e', SPAWNER_PROGRAM, SPAWNER_NAME, String(process.pid)], {
      env: {},
      cwd: '/',
      // Its own process group: a terminal's Ctrl-C for the broker does not reach it.
      detached: true,
      stdio: coveredStdio(['ignore', 'ignore', 'ignore', 'ipc'], undefined),
      windowsHide: true,
    });
    this.process.on('message', (message: SpawnerMessage, handle?: Socket) => this.onMessage(message, handle));
    this.process.on('error', () => this.onGone());
    this.process.on('exit', () => this.onGone());
    this.process.on('disconnect', () => this.onGone());
    this.setHeld(0);
  }

  /** True once the spawner listens (spawns go through it) and until it is gone or stalled. */
  get listening(): boolean {
    return this.ready && !this.gone && !this.stalled;
  }

  /** A spawn has waited longer than SPAWNER_ANSWER_MS for its pid. */
  get stalled(): boolean {
    const oldest = this.unanswered.values().next();
    return !oldest.done && performance.now() - oldest.value > SPAWNER_ANSWER_MS;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  static get supported(): boolean {
    return process.platform === 'linux' && process.versions.bun === undefined;
  }

  /** Starts the launch: through the spawner once it listens, otherwise in this process. */
  spawn(launch: LaunchSpec): HelperChild {
    if (!this.listening) return spawnLaunch(launch);
    const { file, args } = launchCommand(launch);
    // Computed here, from this process's descriptors: the spawner was given /dev/null at each of them.
    const stdio = (coveredStdio(['pipe', 'pipe', 'pipe'], launch.inputs) as unknown[]).map((slot) =>
      typeof slot === 'number' ? 'null' : slot,
    );
    const id = this.nextId++;
    const child = new RemoteChild((delta) => this.setHeld(this.held + delta));
    this.children.set(id, child);
    this.unanswered.set(id, performance.now());
    const seccomp =
      launch.inputs?.seccomp == null ? null : { fd: launch.inputs.firstFd, program: launch.inputs.seccomp };
    this.process.send({ id, file, args, env: launch.env, stdio, seccomp }, (error: Error | null) => {
      if (error !== null) this.onGone();
    });
    return child;
  }

  /** Ends the spawner (its helpers are killed by their owner, and by the spawner as it goes). */
  close(): void {
    if (this.process.connected) this.process.disconnect();
  }

  /**
   * Kills a spawner that cannot end by itself (stopped): what it started dies with it (bwrap's
   * --die-with-parent; a helper blocked on its request reads end-of-file), and its launches the
   * broker holds fail or count as killed (onGone).
   */
  terminate(): void {
    try {
      this.process.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private onMessage(message: SpawnerMessage, handle: Socket | undefined): void {
    if (message.ready === true) {
      this.ready = true;
      return;
    }
    this.unanswered.delete(message.id ?? -1);
    const child = this.children.get(message.id ?? -1);
    if (child === undefined) {
      handle?.destroy();
      return;
    }
    if (message.pid !== undefined && message.stream !== undefined) {
      child.attach(message.pid, message.stream, handle);
      return;
    }
    // Its last message.
    this.children.delete(message.id as number);
    if (message.error !== undefined) child.failed(new Error(message.error));
    else if (message.exit !== undefined) child.exited(...message.exit);
  }

  private onGone(): void {
    if (this.gone) return;
    this.gone = true;
    for (const child of this.children.values()) child.orphaned();
    this.children.clear();
    this.unanswered.clear();
    this.setHeld(0);
  }

  private setHeld(held: number): void {
    this.held = held;
    const handles = [this.process, this.process.channel] as Array<
      { ref?(): void; unref?(): void } | null | undefined
    >;
    for (const handle of handles) {
      if (held > 0 && !this.gone) handle?.ref?.();
      else handle?.unref?.();
    }
  }
}

/**
 * A helper the spawner started, as HelperProcess sees a ChildProcess: its stdio as streams at once
 * (the pipes arrive a message later; a request written before is passed on then), its pid, and
 * 'error' (a spawn that failed) or 'close' (exited, and its output all read).
 */
class RemoteChild extends EventEmitter implements HelperChild {
  pid: number | undefined = undefined;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private done = false;
  private readonly sockets: Socket[] = [];
  private referenced = true;
  private exit: [number | null, NodeJS.Signals | null] | null = null;
  private outputsOpen = 2;
  private pendingSignal: NodeJS.Signals | null = null;

  constructor(private readonly hold: (delta: number) => void) {
    super();
    this.hold(1);
    for (const output of [this.stdout, this.stderr]) {
      output.on('end', () => {
        this.outputsOpen -= 1;
        this.closeIfDone();
      });
    }
  }

  /** One of its pipes, or none: the spawner's end was closed already (the helper is gone). */
  attach(pid: number, stream: 0 | 1 | 2, socket: Socket | undefined): void {
    this.pid = pid;
    if (this.pendingSignal !== null) {
      this.kill(this.pendingSignal);
      this.pendingSignal = null;
    }
    if (socket === undefined) {
      if (stream !== 0) (stream === 1 ? this.stdout : this.stderr).end();
      return;
    }
    this.sockets.push(socket);
    if (!this.referenced) socket.unref();
    socket.on('error', () => {});
    if (stream === 0) {
      // Destroyed: the helper was killed (see HelperProcess.kill); it reads end-of-file.
      if (this.stdin.destroyed) socket.destroy();
      else {
        this.stdin.pipe(socket);
        // Passed on whole, the pipe ends the socket once its writes are flushed (a destroy then
        // would drop what is still queued: a large request arrived cut short). Only a stdin
        // destroyed before all of it went through (a kill) cuts the socket.
        this.stdin.on('close', () => {
          if (!this.stdin.readableEnded) socket.destroy();
        });
      }
    } else {
      const output = stream === 1 ? this.stdout : this.stderr;
      socket.on('data', (chunk: Buffer) => output.write(chunk));
      socket.on('close', () => output.end());
    }
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exit = [code, signal];
    this.closeIfDone();
  }

  failed(error: Error): void {
    this.exit = [null, null];
    this.endOutputs();
    this.emit('error', error);
    this.closeIfDone();
  }

  /** The spawner went: whatever it started is killed with it (it kills its process groups as it goes). */
  orphaned(): void {
    if (this.exit !== null) return;
    if (this.pid === undefined) {
      this.failed(new Error("the warm pool's spawner exited"));
      return;
    }
    this.kill('SIGKILL');
    this.exit = [null, 'SIGKILL'];
    this.endOutputs();
    this.closeIfDone();
  }

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.exit !== null) return false;
    if (this.pid === undefined) {
      // Not started yet as far as the broker knows: killed as soon as its pid arrives.
      this.pendingSignal = signal as NodeJS.Signals;
      return true;
    }
    try {
      process.kill(-this.pid, signal);
    } catch {
      return false;
    }
    return true;
  }

  ref(): void {
    this.setReferenced(true);
  }

  unref(): void {
    this.setReferenced(false);
  }

  private setReferenced(referenced: boolean): void {
    if (referenced === this.referenced || this.done) return;
    this.referenced = referenced;
    this.hold(referenced ? 1 : -1);
    for (const socket of this.sockets) {
      if (referenced) socket.ref();
      else socket.unref();
    }
  }

  private endOutputs(): void {
    for (const socket of this.sockets) socket.destroy();
    this.stdout.end();
    this.stderr.end();
    // Nobody may be reading them (a spawn that failed): the outputs count as read.
    this.stdout.resume();
    this.stderr.resume();
  }

  private closeIfDone(): void {
    if (this.done || this.exit === null || this.outputsOpen > 0) return;
    this.done = true;
    if (this.referenced) this.hold(-1);
    this.emit('close', ...this.exit);
  }
}
