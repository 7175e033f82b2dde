import type { SandboxContextInput } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliIo } from './cli-io.js';
import { addContextOptions, baseDirectory, type ContextFlags, contextFromFlags } from './context-options.js';

/**
 * A server's own policy, for the requests a client sends without a sandbox context (`sandbox`
 * absent or null): the Codex client sends none for its project discovery (`.git`, `AGENTS.md`).
 * It is described with the same profile flags as every other command (`--profile`, `--cwd`,
 * `--writable-root`, `--read-root`, `--deny`, or `--sandbox JSON`) and goes to the broker as its
 * `serverPolicy`; its cwd is the one the server reports. Without these flags there is none, and
 * such requests run in-process as with the reference (refused with `--require-sandbox`).
 */
export interface ServerPolicy {
  context: SandboxContextInput;
  /** Native: `--cwd`, else the server's working directory. */
  cwd: string;
}

/** Adds the profile flags to a server command; `serverPolicyFrom` reads them. */
export function addServerPolicyOptions(command: Command): Command {
  return addContextOptions(command);
}

/** The policy the flags describe, or null when none is set. The directories must exist here. */
export function serverPolicyFrom(flags: ContextFlags, io: CliIo): ServerPolicy | null {
  const context = contextFromFlags(flags, io, undefined, { checkDirectories: true });
  return context === null ? null : { context, cwd: baseDirectory(flags, io) };
}
