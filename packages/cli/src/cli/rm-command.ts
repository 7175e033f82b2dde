import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { withTreeProgress } from './tree-progress-display.js';

/** `fs-sandbox rm [-r] [-f] PATH`: like rm(1), recursion and force are opt-in for people. */
export function registerRmCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'rm'))
    .description('remove a file or directory (fs/remove)')
    .argument('<path>', 'native path')
    .option('-r, --recursive', 'remove directories and their contents')
    .option('-f, --force', 'a missing path is not an error')
    .action((path: string, flags: ShortcutFlags & { json?: boolean; recursive?: boolean; force?: boolean }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const params = {
          path: uri(path),
          recursive: flags.recursive === true,
          force: flags.force === true,
          sandbox,
        };
        const result = await withTreeProgress(deps.io.stderr, 'removing', (onProgress) =>
          broker.call('fs/remove', params, { timeoutMs, ...onProgress }),
        );
        if (flags.json) writeResultJson(deps.io.stdout, result);
      }),
    );
}
