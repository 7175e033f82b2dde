import { PassThrough, type Stream } from 'node:stream';
import { FsError } from '@fs-sandbox/policy/core';
import type { CommandLaunchSpec } from '../backends/backend.js';
import type { CommandExit, SpawnedCommand } from '../command-api.js';
import type { NetworkEventListener } from '../network/network-event.js';
import { CommandProcess, type CommandStream } from './command-process.js';
import { deferredExit, OutputCap } from './output-cap.js';

export interface StartCommandOptions {
  stdin: 'pipe' | 'ignore' | Stream;
  timeoutMs: number | null;
  /** Output past this many bytes (stdout and stderr together) is dropped. */
  outputBytesCap: number | null;
  signal: AbortSignal | undefined;
  /** What the command's network did through the broker (see CommandOptions `onNetwork`). */
  onNetwork?: NetworkEventListener | undefined;
}

/**
 * A library command (`spawn`, and `run` on top of it) on the launch `prepareCommand` built: the same
 * CommandProcess the server's process/start runs, with its output as two streams. A consumer that
 * stops reading one of them pauses both pipes (the command blocks writing) instead of buffering.
 */
export async function startCommand(
  launch: CommandLaunchSpec,
  options: StartCommandOptions,
): Promise<SpawnedCommand> {
  if (options.signal?.aborted) throw commandCancelled();
  const streams: Record<CommandStream, PassThrough> = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
  };
  const waiting = new Set<CommandStream>();
  const cap = new OutputCap(options.outputBytesCap);
  let timedOut = false;
  let cancelled = false;
  let exitCode = 0;
  const { exited, settle, fail } = deferredExit<CommandExit>();
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    cancelled = true;
    command.kill();
  };
  const command = await CommandProcess.start(launch, options.stdin, {
    output(stream, data) {
      const chunk = cap.take(data);
      if (chunk.length > 0 && !streams[stream].write(chunk)) {
        waiting.add(stream);
        command.pause();
        streams[stream].once('drain', () => {
          waiting.delete(stream);
          if (waiting.size === 0) command.resume();
        });
      }
    },
    exit(code) {
      exitCode = code;
    },
    network: options.onNetwork,
    closed() {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      streams.stdout.end();
      streams.stderr.end();
      if (cancelled) fail(commandCancelled());
      else settle({ exitCode, timedOut, capReached: cap.reached, sandboxed: launch.sandboxProgram !== null });
    },
  });
  if (options.timeoutMs !== null) {
    timer = setTimeout(() => {
      timedOut = true;
      command.kill();
    }, options.timeoutMs);
  }
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // Aborted while the command was starting.
  if (options.signal?.aborted) onAbort();
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    stdin: command.stdin,
    exited,
    kill: () => command.kill(),
  };
}

function commandCancelled(): FsError {
  return new FsError('internal_error', 'command cancelled; its process tree was killed');
}

/** `run`: the command to its end, its output collected (bounded by `outputBytesCap`). */
export async function runCommand(
  spawned: SpawnedCommand,
  stdin: string | Uint8Array | undefined,
): Promise<{ exit: CommandExit; stdout: Buffer; stderr: Buffer }> {
  const collect = async (stream: AsyncIterable<Buffer>) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return Buffer.concat(chunks);
  };
  if (spawned.stdin !== null) {
    // EPIPE when the command exits without reading it all: its exit says what happened.
    spawned.stdin.on('error', () => {});
    if (stdin === undefined) spawned.stdin.end();
    else spawned.stdin.end(stdin);
  }
  const [stdout, stderr, exit] = await Promise.all([
    collect(spawned.stdout),
    collect(spawned.stderr),
    spawned.exited,
  ]);
  return { exit, stdout, stderr };
}
