import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

/**
 * `fs-sandbox ls PATH`: one entry per line, sorted, directories marked with a trailing `/`. Names
 * are escaped like `ls -b`: a name is chosen by whoever made the file, and must not drive the terminal.
 */
export function registerLsCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'ls')
    .description('list a directory (fs/readDirectory)')
    .argument('[path]', 'native path', '.')
    .action((path: string, flags: ShortcutFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const result = await broker.call('fs/readDirectory', { path: uri(path), sandbox }, { timeoutMs });
        const names = result.entries
          .map((entry) => `${escapeForTerminal(entry.fileName)}${entry.isDirectory ? '/' : ''}`)
          .sort();
        deps.io.stdout.write(names.map((name) => `${name}\n`).join(''));
      }),
    );
}
