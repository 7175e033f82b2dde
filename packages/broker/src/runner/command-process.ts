import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Stream, Writable } from 'node:stream';
import { FsError, LIMITS } from '@fs-sandbox/policy/core';
import { type CommandLaunchSpec, LAUNCH_CHANNEL_FD } from '../backends/backend.js';
import { commandLaunchCommand } from '../backends/launch-command.js';
import type * as commandProxy from '../network/command-proxy.js';
import type { ProxyNetwork } from '../network/destination.js';
import type { NetworkEventListener } from '../network/network-event.js';
import { type NetworkLaunch, receiveListeners } from '../network/sandbox-listeners.js';
import { CommandCgroup } from './command-cgroup.js';
import { coveredStdio, feedLaunchInputs } from './inherited-masks.js';

export type CommandStream = 'stdout' | 'stderr';

/**
 * The command's stdin: a pipe the caller writes (`write`), none, or a stream with a descriptor that
 * the command reads directly (the CLI's own stdin, so a terminal or a pipe reaches it unbuffered).
 */
export type CommandStdin = 'pipe' | 'ignore' | Stream;

export interface CommandListeners {
  output(stream: CommandStream, chunk: Buffer): void;
  /**
   * The process ended: its exit code, or 128 + the signal that killed it (as a shell reports it).
   * `drainTimedOut`: its output pipes were still open `drainTimeoutMs` after the exit (something
   * it started holds them) and were closed unread; otherwise every output chunk came before.
   */
  exit(exitCode: number, drainTimedOut: boolean): void;
  /** Right after `exit`, once both output pipes ended: nothing more comes. */
  closed(): void;
  /** What the command's network did through the broker: refusals as they happen, connections as they end. */
  network?: NetworkEventListener;
}

export interface CommandStartOptions {
  /** How a command's proxy reaches the machine (tests give their own resolver). */
  proxyNetwork?: ProxyNetwork;
  /**
   * How long after the exit its output is still waited for; absent: until the pipes close. A
   * process the command left behind (outside a pid namespace) may hold them open for ever.
   */
  drainTimeoutMs?: number;
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
  static async start(
    launch: CommandLaunchSpec,
    stdin: CommandStdin,
    listeners: CommandListeners,
    options: CommandStartOptions = {},
  ): Promise<CommandProcess> {
    // Loaded by the first command with a network, before its spawn (the set-up step's listening
    // sockets arrive as messages, which a listener attached late would miss): the proxy's HTTP and
    // SOCKS fronts and its name resolution are most of what a program's start would otherwise load
    // for nothing.
    const network =
      launch.network === undefined
        ? null
        : { launch: launch.network, proxy: await import('../network/command-proxy.js') };
    // The cgroup is made before the spawn and entered by the launch itself (command-cgroup.ts).
    const cgroup =
      launch.cgroup === undefined
        ? null
        : CommandCgroup.create(launch.cgroup.parent, launch.cgroup.maxProcesses);
    const plain = commandLaunchCommand(launch);
    const { file, args } = cgroup === null ? plain : cgroup.wrap(plain);
    const child: ChildProcess = spawn(file, args, {
      env: launch.env,
      cwd: launch.cwd,
      detached: true,
      // Descriptors this process would pass on reach the command as /dev/null (inherited-masks.ts).
      stdio: commandStdio(stdin, launch),
      windowsHide: true,
    });
    feedLaunchInputs(child, launch.inputs);
    const command = new CommandProcess(child, stdin === 'pipe', launch.sandboxProgram !== null);
    await new Promise<void>((resolve, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) {
          void cgroup?.remove();
          reject(spawnError(error, plain.file));
        }
      });
      child.once('spawn', () => resolve());
    });
    // EPIPE when the command exits before reading its stdin: its exit says what happened.
    child.stdin?.on('error', () => {});
    child.once('exit', () => {
      command.exited = true;
    });
    // Before the network is up the command has not run: only the set-up step wrote. What it wrote
    // is held, to be passed on once the start stands or to be part of the refusal if it does not.
    const held: Array<[CommandStream, Buffer]> = [];
    let output = (stream: CommandStream, chunk: Buffer) => {
      held.push([stream, chunk]);
    };
    child.stdout?.on('data', (chunk: Buffer) => output('stdout', chunk));
    child.stderr?.on('data', (chunk: Buffer) => output('stderr', chunk));
    const closed = ended(child);
    if (network !== null) {
      try {
        await command.startNetwork(network.launch, listeners, options, network.proxy);
      } catch (error) {
        command.kill();
        // The sandbox's pid namespace ends with it, so its pipes close at once.
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000))]);
        await cgroup?.remove();
        sweepAfter(launch);
        throw withSetupWords(error, held);
      }
    }
    output = listeners.output;
    for (const [stream, chunk] of held) listeners.output(stream, chunk);
    // Reported once the pipes are drained too, so every output chunk comes before the exit (past
    // the drain deadline they are closed unread and the exit reported without the rest), and once
    // the command's cgroup is gone: whoever waits for the exit finds nothing left behind.
    void drainedOrDeadline(child, closed, options.drainTimeoutMs).then(
      async ({ code, signal, drainTimedOut }) => {
        command.exited = true;
        if (drainTimedOut) {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }
        await cgroup?.remove();
        // Its sandbox is gone: nothing of it writes any more. What the sweep removed is said on
        // its stderr, before the exit, as everything it wrote itself.
        for (const line of sweepAfter(launch)) listeners.output('stderr', Buffer.from(line));
        listeners.exit(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0)), drainTimedOut);
        listeners.closed();
      },
    );
    return command;
  }

  /**
   * Takes the listening sockets the set-up step hands over and serves them for as long as the
   * command runs (the proxy ends with it). Until they are here the command has not started: the
   * step runs before its exec.
   */
  private async startNetwork(
    network: NetworkLaunch,
    listeners: CommandListeners,
    options: CommandStartOptions,
    proxyModule: typeof commandProxy,
  ): Promise<void> {
    const proxy = new proxyModule.CommandProxy(network.allowlist, {
      onEvent: (event) => listeners.network?.(event),
      ...(options.proxyNetwork === undefined ? {} : { network: options.proxyNetwork }),
    });
    this.child.once('exit', () => proxy.close());
    let sockets: Awaited<ReturnType<typeof receiveListeners>>;
    try {
      sockets = await receiveListeners(this.child, network);
    } catch (error) {
      proxy.close();
      throw error;
    }
    for (const { port, use, target } of network.listeners) {
      const socket = sockets.get(port);
      if (socket === undefined) continue;
      if (use === 'http-proxy') proxy.serveHttp(socket);
      else if (use === 'socks-proxy') proxy.serveSocks(socket);
      else if (use === 'unix-relay') proxy.serveUnixRelay(socket, target as string);
      else proxy.serveForward(socket, port);
    }
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

/**
 * The child's exit, once its output pipes are closed too. Not the child's own 'close' event: with
 * an IPC channel node counts that channel among what must close, and a channel the broker itself
 * disconnected (network/sandbox-listeners.ts, as soon as the listeners are in) is never counted.
 */
function ended(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const pipeClosed = (stream: Stream | null) =>
    stream === null || (stream as { closed?: boolean }).closed === true
      ? Promise.resolve()
      : new Promise<void>((resolve) => stream.once('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return Promise.all([exited, pipeClosed(child.stdout), pipeClosed(child.stderr)]).then(([exit]) => exit);
}

type Ended = { code: number | null; signal: NodeJS.Signals | null };

/** `closed`, or the exit once `deadlineMs` passed after it with the pipes still open. */
function drainedOrDeadline(
  child: ChildProcess,
  closed: Promise<Ended>,
  deadlineMs: number | undefined,
): Promise<Ended & { drainTimedOut: boolean }> {
  const drained = closed.then((exit) => ({ ...exit, drainTimedOut: false }));
  if (deadlineMs === undefined) return drained;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Ended & { drainTimedOut: boolean }>((resolve) =>
    child.once('exit', (code, signal) => {
      timer = setTimeout(() => resolve({ code, signal, drainTimedOut: true }), deadlineMs);
    }),
  );
  return Promise.race([drained, deadline]).finally(() => clearTimeout(timer));
}

/** The launch's sweep, whose own failure is reported as a line rather than lost or thrown. */
function sweepAfter(launch: CommandLaunchSpec): string[] {
  if (launch.sweep === undefined) return [];
  try {
    return launch.sweep();
  } catch (error) {
    return [`fs-sandbox: could not check what the command left on the host: ${String(error)}\n`];
  }
}

/** A refused start, with what the set-up step wrote on stderr (bounded). */
function withSetupWords(error: unknown, held: Array<[CommandStream, Buffer]>): unknown {
  const said = Buffer.concat(held.filter(([stream]) => stream === 'stderr').map(([, chunk]) => chunk))
    .subarray(0, LIMITS.helperMaxStderrBytes)
    .toString()
    .trim();
  if (!(error instanceof FsError) || said === '') return error;
  return new FsError(error.kind, `${error.message}: ${said}`, error.extra);
}

/** stdin, the output pipes, and for a network set-up step its channel right after them. */
function commandStdio(stdin: CommandStdin, launch: CommandLaunchSpec): StdioOptions {
  const network = launch.network;
  if (network === undefined) return coveredStdio([stdin, 'pipe', 'pipe'], launch.inputs);
  if (network.channelFd !== LAUNCH_CHANNEL_FD)
    throw new FsError(
      'internal_error',
      `the network channel is descriptor ${LAUNCH_CHANNEL_FD} of the spawn, not ${network.channelFd}`,
    );
  return coveredStdio([stdin, 'pipe', 'pipe', 'ipc'], launch.inputs);
}

function spawnError(error: NodeJS.ErrnoException, file: string): FsError {
  if (error.code === 'ENOENT')
    return new FsError('not_found', `${file}: ${error.message}`, { kind: 'spawnNotFound' });
  if (error.code === 'EACCES')
    return new FsError('permission_denied', `${file}: ${error.message}`, { kind: 'spawnPermissionDenied' });
  return new FsError('io_error', `${file}: ${error.message}`, { kind: 'spawnFailed' });
}
