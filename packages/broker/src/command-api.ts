import type { Stream } from 'node:stream';
import { pathToFileURL } from 'node:url';
import {
  FsError,
  LIMITS,
  type ParamsIn,
  type ParsedParams,
  parseParams,
  parseSandboxContext,
} from '@fs-sandbox/policy';
import type { NetworkEventListener } from './network/network-event.js';

/**
 * The command API's types and the one parse of its options. A command is what process/start
 * starts, so its fields are process/start's, with the wire's names and types (`ParamsIn` of the
 * method table): `cwd` is a `file:` URI like every path the library takes, `sandbox` the same
 * context `broker.call` takes. The library sets what only a connection needs (`processId`, `tty`,
 * `pipeStdin`, `arg0`), and adds what only a process can hand over: a stream for stdin, an abort
 * signal, the output's encoding.
 */

type StartParams = ParamsIn<'process/start'>;

/** A command as the library takes it: process/start's fields (argv, and optionally the rest). */
export type CommandRequest = Pick<StartParams, 'argv'> &
  Partial<Pick<StartParams, 'cwd' | 'env' | 'envPolicy' | 'sandbox' | 'outputBytesCap' | 'timeoutMs'>>;

/** The options of `run` and `spawn`: a CommandRequest without its argv, plus a cancel. */
export type CommandOptions = Omit<CommandRequest, 'argv'> & {
  /** Aborting kills the command's whole process tree; `run` and `exited` reject (`internal_error`). */
  signal?: AbortSignal;
  /**
   * What the command's network did through the broker's proxy (a context with `network_domains`):
   * each refused or failed connection as it happens, each allowed one when it ends.
   */
  onNetwork?: NetworkEventListener;
};

export interface CommandSpawnOptions extends CommandOptions {
  /**
   * The command's stdin: `pipe` (default; write `command.stdin`, end it when done), `ignore`
   * (/dev/null), or a stream with a descriptor the command reads directly (`process.stdin`).
   */
  stdin?: 'pipe' | 'ignore' | Stream;
}

export interface CommandRunOptions extends CommandOptions {
  /** Bytes (or UTF-8 text) written to the command's stdin, which is then closed; none: /dev/null. */
  stdin?: string | Uint8Array;
  /** `utf8` (default): stdout and stderr as strings; `buffer`: as Buffers. */
  encoding?: 'utf8' | 'buffer';
}

/** How a command ended. */
export interface CommandExit {
  /** The command's exit code, or 128 + the signal that ended it (137 when killed). */
  exitCode: number;
  /** Killed at `timeoutMs`. */
  timedOut: boolean;
  /** Output past `outputBytesCap` (stdout and stderr together) was dropped. */
  capReached: boolean;
  /** Ran inside a platform sandbox (false only where the context grants everything anyway). */
  sandboxed: boolean;
}

/** What `run` resolves to: the exit and the whole output (strings, or Buffers with `encoding: 'buffer'`). */
export interface RunResult<Output extends string | Buffer = string> extends CommandExit {
  stdout: Output;
  stderr: Output;
}

/** A started command (`spawn`): its output as it comes, its stdin, its end. */
export interface SpawnedCommand {
  /** Its stdout and stderr; a consumer that stops reading makes the command wait on its pipe. */
  readonly stdout: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  readonly stderr: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  /** Its stdin with `stdin: 'pipe'` (the default), else null. End it to send EOF. */
  readonly stdin: NodeJS.WritableStream | null;
  /** Resolves once it exited and both output streams ended; rejects when `signal` aborted it. */
  readonly exited: Promise<CommandExit>;
  /** Kills its whole process tree (idempotent); `exited` then resolves with 137. */
  kill(): void;
}

/** Fields of process/start the library sets itself: a caller passing one is told so. */
const SET_BY_THE_LIBRARY = ['processId', 'tty', 'pipeStdin', 'arg0', 'argv'] as const;

/**
 * Without an `envPolicy` the library gives a command what `fs-sandbox run` gives it: the broker's
 * allowlisted variables minus credential-like names, with `env` on top. `envPolicy: null` is the
 * wire's meaning: exactly `env`.
 */
const DEFAULT_ENV_POLICY: NonNullable<ParsedParams<'process/start'>['envPolicy']> = {
  inherit: 'core',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
};

/**
 * The command's sandbox context, parsed on its own for its `cwd`: a refusal names its field as the
 * caller wrote it (`sandbox.cwd`), not as the context's own (`cwd`, which is the command's option).
 */
function contextOf(sandbox: CommandRequest['sandbox']): ReturnType<typeof parseSandboxContext> {
  try {
    return parseSandboxContext(sandbox);
  } catch (error) {
    if (!(error instanceof FsError) || typeof error.extra?.field !== 'string') throw error;
    throw new FsError(error.kind, error.message, { ...error.extra, field: `sandbox.${error.extra.field}` });
  }
}

/**
 * The command's process/start params as the wire carries them, before the schema's parse: the
 * caller's fields with what the library sets (`processId`, `tty`, `pipeStdin`, an env policy). A
 * caller passing one of the library's fields is told so. Without a `cwd` the command runs in the
 * context's `cwd`, else in `defaultCwd` (none: the caller must name one).
 */
export function commandStartParams(
  argv: readonly string[],
  wire: Omit<CommandRequest, 'argv'>,
  launch: { processId: string; pipeStdin: boolean; defaultCwd: string | null },
): StartParams {
  if (typeof wire !== 'object' || wire === null)
    throw new FsError('invalid_params', 'command options must be an object');
  for (const name of SET_BY_THE_LIBRARY) {
    if (Object.hasOwn(wire, name))
      throw new FsError('invalid_params', `\`${name}\` is set by the broker for a library command`, {
        field: name,
      });
  }
  const cwd = wire.cwd ?? contextOf(wire.sandbox)?.cwd ?? launch.defaultCwd;
  if (cwd === null) {
    throw new FsError('invalid_params', 'a remote command needs a `cwd` (or a sandbox context with one)', {
      field: 'cwd',
    });
  }
  return {
    ...wire,
    argv: [...argv],
    cwd,
    env: wire.env ?? {},
    envPolicy: wire.envPolicy === undefined ? DEFAULT_ENV_POLICY : wire.envPolicy,
    processId: launch.processId,
    tty: false,
    pipeStdin: launch.pipeStdin,
  };
}

/**
 * The command's process/start params, parsed by that method's schema (strict: an unknown option is
 * `invalid_params` naming the closest known one). Without a `cwd`, the command runs in the
 * context's `cwd`, else in this process's working directory.
 */
export function parseCommandRequest(
  argv: readonly string[],
  wire: Omit<CommandRequest, 'argv'>,
): ParsedParams<'process/start'> {
  const launch = { processId: 'library', pipeStdin: false, defaultCwd: pathToFileURL(process.cwd()).href };
  return parseParams('process/start', commandStartParams(argv, wire, launch));
}

/** `run`'s output bound: its `outputBytesCap` when given (at most the limit), else the limit. */
export function runOutputCap(outputBytesCap: number | null | undefined): number {
  if (outputBytesCap == null) return LIMITS.commandRunOutputBytes;
  if (outputBytesCap > LIMITS.commandRunOutputBytes) {
    throw new FsError(
      'invalid_params',
      `outputBytesCap of run is at most ${LIMITS.commandRunOutputBytes} bytes (it keeps the output in memory); stream a larger output with spawn`,
      { field: 'outputBytesCap' },
    );
  }
  return outputBytesCap;
}
