import { constants } from 'node:os';
import type { Stream } from 'node:stream';
import type { SpawnedCommand } from '@fs-sandbox/broker';
import { FsError } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { addProcessLimitOption } from './broker-options.js';
import type { CliDeps } from './cli-io.js';
import { addNetworkOptions, collect, type NetworkFlags, withNetworkFlags } from './context-options.js';
import { humanError } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/**
 * Exit codes of `run` beyond the command's own, as `env`, `timeout` and container runners use
 * them, so a script can tell the runner's failure from the command's.
 */
export const RUN_EXIT = { refused: 125, notExecutable: 126, notFound: 127, timedOut: 124 } as const;

/** Signals that end `run`: each kills the command's sandboxed tree, then `run` exits 128 + its number. */
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

type RunFlags = ShortcutFlags & NetworkFlags & { env: string[] };

/**
 * `fs-sandbox run [flags] -- CMD ARGS…`: one command under the sandbox the flags describe (by
 * default workspace-write on the cwd, the platform's minimal reads, no network), through the same
 * launch as the server's process/start. It reads this process's stdin directly, its output is
 * streamed as it comes, and its exit code is ours.
 */
export function registerRunCommand(program: Command, deps: CliDeps): void {
  addProcessLimitOption(addNetworkOptions(shortcutCommand(program, 'run')))
    .description('run a command in the sandbox; its output streams through, its exit code is passed on')
    .argument('<command...>', 'the program and its arguments (everything after the first one is theirs)')
    .passThroughOptions()
    .option(
      '--env <NAME=VALUE>',
      "set a variable for the command (repeatable; beyond these it gets the broker's allowlisted variables minus *KEY*, *SECRET*, *TOKEN*)",
      collect,
      [],
    )
    .action((argv: string[], flags: RunFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, cwd, uri }) => {
        try {
          // The library's spawn: process/start's launch and process, as a library user gets them.
          const command = await broker.spawn(argv, {
            cwd: uri(cwd),
            sandbox: withNetworkFlags(sandbox, flags),
            env: parseEnvFlags(flags.env),
            stdin: deps.io.stdin as unknown as Stream,
            // A refused connection is also said here: the client's own message may only be "403".
            onNetwork: (event) => {
              if (event.outcome !== 'allowed')
                deps.io.stderr.write(`fs-sandbox: network: ${event.reason ?? event.outcome}\n`);
            },
            ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }),
          });
          deps.setExitCode(await runToExit(deps, command, flags.timeout));
        } catch (error) {
          deps.io.stderr.write(humanError(error));
          deps.setExitCode(exitCodeOf(error));
        }
      }),
    );
}

async function runToExit(
  deps: CliDeps,
  command: SpawnedCommand,
  timeoutMs: number | undefined,
): Promise<number> {
  // A slow reader of our output slows the command down instead of filling our memory.
  command.stdout.pipe(deps.io.stdout, { end: false });
  command.stderr.pipe(deps.io.stderr, { end: false });
  let override: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    override = 128 + (constants.signals[signal] ?? 0);
    command.kill();
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, onSignal);
  try {
    const exit = await command.exited;
    if (exit.timedOut) {
      deps.io.stderr.write(
        `fs-sandbox: the command ran past --timeout ${timeoutMs} ms and was killed [timeout]\n`,
      );
      return RUN_EXIT.timedOut;
    }
    return override ?? exit.exitCode;
  } finally {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, onSignal);
  }
}

function parseEnvFlags(values: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of values) {
    const equals = value.indexOf('=');
    if (equals < 1) throw new FsError('invalid_params', `--env ${value} is not NAME=VALUE`);
    env[value.slice(0, equals)] = value.slice(equals + 1);
  }
  return env;
}

function exitCodeOf(error: unknown): number {
  const kind = error instanceof FsError ? error.extra?.kind : undefined;
  if (kind === 'spawnNotFound') return RUN_EXIT.notFound;
  if (kind === 'spawnPermissionDenied') return RUN_EXIT.notExecutable;
  return RUN_EXIT.refused;
}
