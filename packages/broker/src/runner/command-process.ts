import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Stream, Writable } from 'node:stream';
import { FsError, LIMITS } from '@fs-sandbox/policy/core';
import type { CommandLaunchSpec } from '../backends/backend.js';
import { commandLaunchCommand } from '../backends/launch-command.js';
import { coveredStdio, feedLaunchInputs } from './inherited-masks.js';

export type CommandStream = 'stdout' | 'stderr';

/**
 * The command's stdin: a pipe the caller writes (`write`), none, or a stream with a descriptor that
 * the command reads directly (the CLI's own stdin, so a terminal or a pipe reaches it unbuffered).
 */
export type CommandStdin = 'pipe' | 'ignore' | Stream;

export interface CommandListeners {
  output(stream: CommandStream, chunk: Buffer): void;
  /** The process ended: its exit code, or 128 + the signal that killed it (as a shell reports it). */
  exit(exitCode: number): void;
  /** Right after `exit`, once both output pipes ended: nothing more comes. */
  closed(): void;
}

/**
 * One running command (process/start). Detached into its own process group, so a kill reaches
 * everything it started outside a sandbox; under bwrap, `--die-with-parent` and the pid namespace
 * take the whole sandboxed tree down with bwrap. Output is read only while the consumer wants it
 * (`pause`/`resume`): a client that stops reading makes the command block on its pipe instead of
 * growing the server's memory.
 */
export class CommandProcess {
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly stdinOpen: boolean,
    private readonly sandboxed: boolean,
  ) {}

  /** Starts the command; rejects with the reference's start error kinds when it cannot be spawned. */
  static start(
    launch: CommandLaunchSpec,
    stdin: CommandStdin,
    listeners: CommandListeners,
  ): Promise<CommandProcess> {
    const { file, args } = commandLaunchCommand(launch);
    const child: ChildProcess = spawn(file, args, {
      env: launch.env,
      cwd: launch.cwd,
      detached: true,
      // Descriptors this process would pass on reach the command as /dev/null (inherited-masks.ts).
      stdio: coveredStdio([stdin, 'pipe', 'pipe'], launch.inputs),
      windowsHide: true,
    });
    feedLaunchInputs(child, launch.inputs);
    const command = new CommandProcess(child, stdin === 'pipe', launch.sandboxProgram !== null);
    return new Promise((resolve, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) reject(spawnError(error, file));
      });
      child.once('spawn', () => {
        child.stdout?.on('data', (chunk: Buffer) => listeners.output('stdout', chunk));
        child.stderr?.on('data', (chunk: Buffer) => listeners.output('stderr', chunk));
        // EPIPE when the command exits before reading its stdin: its exit says what happened.
        child.stdin?.on('error', () => {});
        child.once('exit', () => {
          command.exited = true;
        });
        // Reported once the pipes are drained too, so every output chunk comes before the exit.
        child.once('close', (code, signal) => {
          command.exited = true;
          listeners.exit(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0)));
          listeners.closed();
        });
        resolve(command);
      });
    });
  }

  /** The command's stdin when it was started with `pipe` (for a caller that streams into it). */
  get stdin(): Writable | null {
    return this.stdinOpen ? this.child.stdin : null;
  }

  get running(): boolean {
    return !this.exited;
  }

  pause(): void {
    this.child.stdout?.pause();
    this.child.stderr?.pause();
  }

  resume(): void {
    this.child.stdout?.resume();
    this.child.stderr?.resume();
  }

  /** Queues bytes for stdin; refuses past LIMITS.processStdinBufferBytes rather than buffer without bound. */
  write(bytes: Buffer): 'accepted' | 'stdinClosed' {
    const stdin = this.child.stdin;
    if (!this.stdinOpen || stdin === null || stdin.destroyed || !stdin.writable || this.exited)
      return 'stdinClosed';
    if (stdin.writableLength + bytes.length > LIMITS.processStdinBufferBytes) {
      throw new FsError(
        'invalid_request',
        `stdin of this process holds ${stdin.writableLength} unread bytes; wait until the command reads them (at most ${LIMITS.processStdinBufferBytes} are buffered)`,
      );
    }
    stdin.write(bytes);
    return 'accepted';
  }

  /** Ends the command's stdin once what was queued is written (the command then reads EOF). */
  closeStdin(): void {
    if (this.stdinOpen) this.child.stdin?.end();
  }

  /** SIGKILL to the whole process group. */
  kill(): void {
    this.signalGroup('SIGKILL');
  }

  /**
   * SIGINT to the command's process group. A sandboxed command cannot be sent one: the group holds
   * bwrap, not the command (it runs in its own session and pid namespace), and a SIGINT that ends
   * bwrap during its set-up, before `--die-with-parent` is armed, leaves the sandbox running
   * untracked. So there an interrupt stops the sandboxed tree as terminate does (exit 137).
   */
  interrupt(): void {
    if (this.sandboxed) this.kill();
    else this.signalGroup('SIGINT');
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // Already gone between the exit check and the kill.
    }
  }
}

function spawnError(error: NodeJS.ErrnoException, file: string): FsError {
  if (error.code === 'ENOENT')
    return new FsError('not_found', `${file}: ${error.message}`, { kind: 'spawnNotFound' });
  if (error.code === 'EACCES')
    return new FsError('permission_denied', `${file}: ${error.message}`, { kind: 'spawnPermissionDenied' });
  return new FsError('io_error', `${file}: ${error.message}`, { kind: 'spawnFailed' });
}
