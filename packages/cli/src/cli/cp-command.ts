import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { withTreeProgress } from './tree-progress-display.js';

/** `fs-sandbox cp [-r] SOURCE DESTINATION`. */
export function registerCpCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'cp'))
    .description('copy a file or directory (fs/copy)')
    .argument('<source>', 'native path')
    .argument('<destination>', 'native path')
    .option('-r, --recursive', 'copy directories')
    .action(
      (source: string, destination: string, flags: ShortcutFlags & { json?: boolean; recursive?: boolean }) =>
        runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
          const params = {
            sourcePath: uri(source),
            destinationPath: uri(destination),
            recursive: flags.recursive === true,
            sandbox,
          };
          const result = await withTreeProgress(deps.io.stderr, 'copying', (onProgress) =>
            broker.call('fs/copy', params, { timeoutMs, ...onProgress }),
          );
          if (flags.json) writeResultJson(deps.io.stdout, result);
        }),
    );
}
