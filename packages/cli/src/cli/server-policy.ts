import type { SandboxContextInput } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliIo } from './cli-io.js';
import { addContextOptions, baseDirectory, type ContextFlags, contextFromFlags } from './context-options.js';

/**
 * A server's own policy, described with the same profile flags as every other command
 * (`--profile`, `--cwd`, `--writable-root`, `--read-root`, `--deny`, or `--sandbox JSON`). It goes
 * to the broker as its `serverPolicy`, the policy of the requests a client sends without a sandbox
 * context (`sandbox` absent or null; the Codex client sends none for its project discovery, `.git`,
 * `AGENTS.md`), and its cwd is the one the server reports. For `serve`, without these flags there
 * is none, and such requests run in-process as with the reference (refused with
 * `--require-sandbox`). `app-server` always has one (`byDefault`: workspace-write on the cwd): it
 * is what every V2 request runs under.
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

/**
 * The policy the flags describe, or null when none is set (with `byDefault`, workspace-write on the
 * cwd instead). The directories must exist here.
 */
export function serverPolicyFrom(
  flags: ContextFlags,
  io: CliIo,
  options: { byDefault?: boolean } = {},
): ServerPolicy | null {
  const context = contextFromFlags(flags, io, undefined, {
    checkDirectories: true,
    sandboxByDefault: options.byDefault === true,
  });
  return context === null ? null : { context, cwd: baseDirectory(flags, io) };
}
