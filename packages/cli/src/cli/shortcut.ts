import { resolve } from 'node:path';
import type { FsBroker } from '@fs-sandbox/broker/internal';
import { currentHostOs, nativeToPathUri, type SandboxContextInput } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { addBrokerOptions, type BrokerFlags, brokerOptionsFrom } from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import {
  addContextOptions,
  baseDirectory,
  type ContextFlags,
  type PolicyOrigin,
  resolveContext,
} from './context-options.js';
import { humanError } from './json-output.js';

export type ShortcutFlags = ContextFlags & BrokerFlags;

/** What a shortcut's body gets: the broker, the sandbox context, and native path → URI. */
export interface ShortcutRun {
  broker: FsBroker;
  sandbox: SandboxContextInput | null;
  /** The policy file's profile in `sandbox`, and where each of its entries was written (null without one). */
  policy: PolicyOrigin | null;
  uri(path: string): string;
  timeoutMs: number | undefined;
  /** The native directory relative operands resolve against (`--cwd`, else the process cwd). */
  cwd: string;
}

/**
 * Adds the context and broker flags that every people-facing shortcut shares. A shortcut is
 * sandboxed by default (workspace-write on the cwd, the platform's minimal reads); `--no-sandbox`
 * runs it in-process.
 */
export function shortcutCommand(program: Command, name: string): Command {
  return addBrokerOptions(
    addContextOptions(program.command(name)).option(
      '--no-sandbox',
      'run without a sandbox, in-process (default: workspace-write on the cwd, minimal reads)',
    ),
  );
}

/**
 * Runs a shortcut body with native paths for people (resolved against the cwd) and a one-line
 * `fs-sandbox: <message> [<errorKind>]` on stderr for failures (exit 1).
 */
export async function runShortcut(
  deps: CliDeps,
  flags: ShortcutFlags,
  body: (run: ShortcutRun) => Promise<void>,
): Promise<void> {
  const os = currentHostOs();
  const broker = deps.createBroker(brokerOptionsFrom(flags, deps.io));
  try {
    const { context: sandbox, policy } = resolveContext(flags, deps.io, os, {
      sandboxByDefault: true,
      checkDirectories: true,
    });
    // Operands resolve against --cwd, like the flag paths and the sandbox's own cwd.
    const base = baseDirectory(flags, deps.io);
    await body({
      broker,
      sandbox,
      policy,
      uri: (path) => nativeToPathUri(resolve(base, path), os),
      timeoutMs: flags.timeout,
      cwd: base,
    });
  } catch (error) {
    deps.io.stderr.write(humanError(error));
    deps.setExitCode(EXIT.failed);
  } finally {
    await broker.close();
  }
}
