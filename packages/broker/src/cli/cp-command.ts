import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `fs-sandbox cp [-r] SOURCE DESTINATION`. */
export function registerCpCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'cp')
    .description('copy a file or directory (fs/copy)')
    .argument('<source>', 'native path')
    .argument('<destination>', 'native path')
    .option('-r, --recursive', 'copy directories')
    .action((source: string, destination: string, flags: ShortcutFlags & { recursive?: boolean }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const params = {
          sourcePath: uri(source),
          destinationPath: uri(destination),
          recursive: flags.recursive === true,
          sandbox,
        };
        await broker.call('fs/copy', params, { timeoutMs });
      }),
    );
}
