import { constants } from 'node:os';
import type { Stream } from 'node:stream';
import { type CommandLaunchSpec, CommandProcess } from '@fs-sandbox/broker/internal';
import { FsError } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { collect } from './context-options.js';
import { humanError } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/**
 * Exit codes of `run` beyond the command's own, as `env`, `timeout` and container runners use
 * them, so a script can tell the runner's failure from the command's.
 */
export const RUN_EXIT = { refused: 125, notExecutable: 126, notFound: 127, timedOut: 124 } as const;

/** Signals that end `run`: each kills the command's sandboxed tree, then `run` exits 128 + its number. */
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

type RunFlags = ShortcutFlags & { env: string[] };

/**
 * `fs-sandbox run [flags] -- CMD ARGS…`: one command under the sandbox the flags describe (by
 * default workspace-write on the cwd, the platform's minimal reads, no network), through the same
 * launch as the server's process/start. It reads this process's stdin directly, its output is
 * streamed as it comes, and its exit code is ours.
 */
export function registerRunCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'run')
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
      runShortcut(deps, flags, async ({ broker, sandbox, cwd }) => {
        try {
          const launch = await broker.prepareCommand(sandbox, {
            argv,
            cwd,
            env: parseEnvFlags(flags.env),
            envPolicy: {
              inherit: 'core',
              ignoreDefaultExcludes: false,
              exclude: [],
              set: {},
              includeOnly: [],
            },
          });
          deps.setExitCode(await runToExit(deps, launch, flags.timeout));
        } catch (error) {
          deps.io.stderr.write(humanError(error));
          deps.setExitCode(exitCodeOf(error));
        }
      }),
    );
}

async function runToExit(
  deps: CliDeps,
  launch: CommandLaunchSpec,
  timeoutMs: number | undefined,
): Promise<number> {
  const { stdout, stderr } = deps.io;
  let finish: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const command = await CommandProcess.start(launch, deps.io.stdin as unknown as Stream, {
    output: (stream, chunk) => {
      // A slow reader of our output slows the command down instead of filling our memory.
      if (!(stream === 'stdout' ? stdout : stderr).write(chunk)) {
        command.pause();
        (stream === 'stdout' ? stdout : stderr).once('drain', () => command.resume());
      }
    },
    exit: (code) => finish(code),
    closed: () => {},
  });
  let override: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    override = 128 + (constants.signals[signal] ?? 0);
    command.kill();
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, onSignal);
  const timer =
    timeoutMs === undefined
      ? null
      : setTimeout(() => {
          override = RUN_EXIT.timedOut;
          stderr.write(
            `fs-sandbox: the command ran past --timeout ${timeoutMs} ms and was killed [timeout]\n`,
          );
          command.kill();
        }, timeoutMs);
  try {
    const code = await exited;
    return override ?? code;
  } finally {
    if (timer !== null) clearTimeout(timer);
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
