import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';
import { withTreeProgress } from './tree-progress-display.js';

/** `fs-sandbox mv [--force] SOURCE DESTINATION`: like mv(1), but an existing destination is kept unless --force. */
export function registerMvCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'mv'))
    .description('move or rename a file, link or directory (fs/rename)')
    .argument('<source>', 'native path')
    .argument('<destination>', 'native path (the new name, not a directory to move into)')
    .option('-f, --force', 'replace an existing destination (a file, or an empty directory)')
    .action(
      (source: string, destination: string, flags: ShortcutFlags & { json?: boolean; force?: boolean }) =>
        runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
          const params = {
            sourcePath: uri(source),
            destinationPath: uri(destination),
            overwrite: flags.force === true,
            sandbox,
          };
          const result = await withTreeProgress(deps.io.stderr, 'moving', (onProgress) =>
            broker.call('fs/rename', params, { timeoutMs, ...onProgress }),
          );
          if (flags.json) writeResultJson(deps.io.stdout, result);
          else if (result.copiedAcrossDevices) {
            deps.io.stderr.write(
              `${escapeForTerminal(`fs-sandbox: ${source} was on another file system: copied to ${destination}, then removed`)}\n`,
            );
          }
        }),
    );
}
