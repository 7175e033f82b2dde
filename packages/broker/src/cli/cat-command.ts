import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `fs-sandbox cat PATH`: the file's bytes on stdout. */
export function registerCatCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'cat')
    .description('print a file (fs/readFile)')
    .argument('<path>', 'native path')
    .action((path: string, flags: ShortcutFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const result = await broker.call('fs/readFile', { path: uri(path), sandbox }, { timeoutMs });
        deps.io.stdout.write(result.dataBase64);
      }),
    );
}
