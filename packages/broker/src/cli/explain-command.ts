import { currentHostOs, FsError } from '@fs-sandbox/policy';
import { type Command, Option } from 'commander';
import { type CliDeps, EXIT } from './cli-io.js';
import { addContextOptions, type ContextFlags, contextFromFlags } from './context-options.js';
import { humanError } from './json-output.js';
import { formatCommand } from './shell-quote.js';

/**
 * `fs-sandbox explain`: the exact platform command a sandbox context produces on this host (the
 * same argv the runner would spawn, built from the same plan and host facts).
 */
export function registerExplainCommand(program: Command, deps: CliDeps): void {
  addContextOptions(program.command('explain'))
    .description('print the exact sandbox command a context produces')
    .argument('[context]', 'sandbox context as JSON (wire form); or use the profile flags')
    .addOption(new Option('--platform <os>', 'target platform').choices(['linux', 'macos', 'windows']))
    .action(async (contextJson: string | undefined, flags: ContextFlags & { platform?: string }) => {
      const host = currentHostOs();
      const broker = deps.createBroker({ env: deps.io.env });
      try {
        const platform = flags.platform ?? host;
        if (platform !== host) {
          throw new FsError(
            'sandbox_unavailable',
            `explain for ${platform} is not available on a ${host} host`,
          );
        }
        const sandbox = contextFromFlags(
          contextJson === undefined ? flags : { ...flags, sandbox: contextJson },
          deps.io,
          host,
        );
        const { launch } = await broker.prepareSandbox(sandbox);
        deps.io.stdout.write(
          `# backend: ${launch.backend} (${platform})\n${formatCommand(launch.file, launch.args)}\n`,
        );
        for (const [name, value] of Object.entries(launch.details ?? {})) {
          deps.io.stdout.write(
            `# ${name}:\n${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`,
          );
        }
      } catch (error) {
        deps.io.stderr.write(humanError(error));
        deps.setExitCode(EXIT.failed);
      } finally {
        await broker.close();
      }
    });
}
