import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `fs-sandbox mkdir [-p] PATH`: like mkdir(1), missing parents are made only with `-p`. */
export function registerMkdirCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'mkdir'))
    .description('make a directory (fs/createDirectory)')
    .argument('<path>', 'native path')
    .option('-p, --parents', 'make missing parent directories too (fs/createDirectory recursive: true)')
    .action((path: string, flags: ShortcutFlags & { json?: boolean; parents?: boolean }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const params = { path: uri(path), recursive: flags.parents === true, sandbox };
        const result = await broker.call('fs/createDirectory', params, { timeoutMs });
        if (flags.json) writeResultJson(deps.io.stdout, result);
      }),
    );
}
