import { LIMITS } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { appServerSurface } from '../server/app-server/app-server-surface.js';
import type { CliDeps } from './cli-io.js';
import type { ContextFlags } from './context-options.js';
import { addServerOptions, runServer, type ServeFlags } from './serve-command.js';
import { addServerPolicyOptions, type ServerPolicy, serverPolicyFrom } from './server-policy.js';

type AppServerFlags = ServeFlags & ContextFlags;

/**
 * Requests of one connection running at once: a command/exec holds its slot until its command
 * exits, so there is room for every process a connection may run and for requests beside them.
 */
const APP_SERVER_CONCURRENCY = LIMITS.processesPerConnection + 8;

/**
 * `fs-sandbox app-server`: the file, watch, process and command methods of the Codex app-server's
 * V2 protocol, every request under the policy the profile flags describe (by default
 * workspace-write on the cwd with the platform's minimal reads, as `fs-sandbox run`). The wire is
 * the reference's (newline-delimited JSON-RPC without `"jsonrpc"`); what differs from
 * `codex app-server` is that nothing runs outside that policy.
 */
export function registerAppServerCommand(program: Command, deps: CliDeps): void {
  addServerOptions(addServerPolicyOptions(program.command('app-server')), 'stdio://', APP_SERVER_CONCURRENCY)
    .description(
      "serve the Codex app-server's V2 file, watch, process and command methods, every request under this policy",
    )
    .action(async (flags: AppServerFlags) => {
      await runServer(
        'app-server',
        flags,
        deps,
        (broker, policy) =>
          appServerSurface({
            broker,
            // serverPolicyFrom with byDefault always describes one.
            ...(policy as ServerPolicy),
            requireSandbox: flags.requireSandbox === true,
            env: deps.io.env,
          }),
        () => {
          // A command's sandboxPolicy narrows the server's file-system entries, which the profile
          // flags always describe; a context given whole could grant everything and leave nothing
          // to narrow.
          if (flags.sandbox !== undefined)
            throw new Error('app-server takes the profile flags, not --sandbox');
          return serverPolicyFrom(flags, deps.io, { byDefault: true });
        },
      );
    });
}
