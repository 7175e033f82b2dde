import { currentHostOs, type HostOs, parseSandboxContext } from '@fs-sandbox/policy';
import { type Command, Option } from 'commander';
import { launchCommand } from '../backends/launch-command.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { addContextOptions, type ContextFlags, contextFromFlags } from './context-options.js';
import { explainForPlatform } from './explain-foreign.js';
import { humanError } from './json-output.js';
import { formatCommand } from './shell-quote.js';
import { escapeLines, terminalSafeJson } from './terminal-text.js';

/**
 * `fs-sandbox explain`: the exact platform command a sandbox context produces. On this host it is
 * the argv the runner would spawn (same plan, same host facts); for another platform it is that
 * platform's pure builder, with the runtime locations it cannot see stated as assumptions.
 */
export function registerExplainCommand(program: Command, deps: CliDeps): void {
  addContextOptions(program.command('explain'))
    .description('print the exact sandbox command a context produces')
    .argument('[context]', 'sandbox context as JSON (wire form); or use the profile flags')
    .addOption(new Option('--platform <os>', 'target platform').choices(['linux', 'macos', 'windows']))
    .action(async (contextJson: string | undefined, flags: ContextFlags & { platform?: HostOs }) => {
      const host = currentHostOs();
      const platform = flags.platform ?? host;
      const broker = deps.createBroker({ env: deps.io.env });
      try {
        const sandbox = contextFromFlags(
          contextJson === undefined ? flags : { ...flags, sandbox: contextJson },
          deps.io,
          platform,
        );
        const { launch, assumptions } =
          platform === host
            ? { ...(await broker.prepareSandbox(sandbox)), assumptions: [] }
            : await explainForPlatform(parseSandboxContext(sandbox), platform, deps.io.env);
        const notes = assumptions.map((note) => `# assumed: ${note}\n`).join('');
        const command = launchCommand(launch);
        deps.io.stdout.write(
          `# backend: ${launch.backend} (${platform})\n${notes}${formatCommand(command.file, command.args)}\n`,
        );
        for (const [name, value] of Object.entries(launch.details ?? {})) {
          deps.io.stdout.write(
            `# ${name}:\n${typeof value === 'string' ? escapeLines(value) : terminalSafeJson(JSON.stringify(value, null, 2))}\n`,
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
