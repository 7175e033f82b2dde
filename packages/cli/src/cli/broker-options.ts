import {
  type BrokerOptions,
  HELPER_RUNTIME_CHOICES,
  type HelperRuntimeChoice,
  LINUX_BACKEND_CHOICES,
  type LinuxBackendPreference,
} from '@fs-sandbox/broker/internal';
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import type { CliIo } from './cli-io.js';

export interface BrokerFlags {
  timeout?: number;
  /** commander's negated flag: false when --no-precheck was given. */
  precheck: boolean;
  /** Only on the commands that take a caller's params as they are (call, serve). */
  requireSandbox?: boolean;
  /** Only on call and serve: refuse every write-class method (the trust gate). */
  untrusted?: boolean;
  helperRuntime?: HelperRuntimeChoice;
  backend?: LinuxBackendPreference;
  /** Only on the commands that run commands (run, serve, app-server). */
  maxProcesses?: number | 'none';
}

export function positiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError('expected a positive integer');
  return value;
}

/** `--backend`: which Linux sandbox runs helpers and commands (also on doctor and explain). */
export function addBackendOption(command: Command): Command {
  return command.addOption(
    new Option(
      '--backend <backend>',
      'Linux sandbox (default: FS_SANDBOX_BACKEND, else auto: bwrap where it can make its namespaces, else Landlock)',
    ).choices([...LINUX_BACKEND_CHOICES]),
  );
}

/** Flags every operation command shares. */
export function addBrokerOptions(command: Command): Command {
  return addBackendOption(command)
    .option('--timeout <ms>', 'helper run time before its process tree is killed', positiveInteger)
    .addOption(
      new Option(
        '--helper-runtime <runtime>',
        'runtime that executes the helper (default: FS_SANDBOX_HELPER_RUNTIME, else auto: the Bun helper when built and working, else node)',
      ).choices([...HELPER_RUNTIME_CHOICES]),
    )
    .option(
      '--no-precheck',
      'skip the early policy check (for testing: the kernel sandbox still enforces; errors are less clear)',
    );
}

/**
 * `--require-sandbox`, for the commands that run a caller's params as they are (call, serve): there
 * a missing or in-process context comes from the caller, so the operator can refuse it outright.
 */
export function addRequireSandboxOption(command: Command): Command {
  return command.option(
    '--require-sandbox',
    'refuse (permission_denied) any request without a sandbox or whose context runs unsandboxed (disabled, external, unrestricted, full-disk write)',
  );
}

/** `--max-processes`, for the commands that run commands (run, serve, app-server). */
export function addProcessLimitOption(command: Command): Command {
  return command.option(
    '--max-processes <n>',
    "tasks (processes and threads) one command's sandbox may hold, or `none` (default 1024; `fs-sandbox doctor` says how this machine bounds them)",
    // Not null for `none`: commander turns a parser's null into ''.
    (text: string) => (text === 'none' ? 'none' : positiveInteger(text)),
  );
}

/** `--untrusted`, for call and serve: the workspace is not trusted yet, so only reads run. */
export function addUntrustedOption(command: Command): Command {
  return command.option(
    '--untrusted',
    'refuse (untrusted_workspace) every method that creates, replaces or removes a path, batches holding one, and every command (process/start); reads still run',
  );
}

export function brokerOptionsFrom(flags: BrokerFlags, io: CliIo): BrokerOptions {
  // No warm pool: these commands run an operation or two and exit, so a spare would be spawned
  // only to be killed at exit. `serve` turns it on with its --pool-* flags.
  return {
    env: io.env,
    precheck: flags.precheck,
    timeoutMs: flags.timeout,
    requireSandbox: flags.requireSandbox === true,
    trusted: flags.untrusted !== true,
    helperRuntime: flags.helperRuntime,
    ...(flags.backend === undefined ? {} : { backend: flags.backend }),
    pool: false,
    ...(flags.maxProcesses === undefined
      ? {}
      : { maxProcesses: flags.maxProcesses === 'none' ? null : flags.maxProcesses }),
  };
}
