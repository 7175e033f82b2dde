import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `fs-sandbox cat PATH`: the file's bytes on stdout; with `--json`, the wire result (base64). */
export function registerCatCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'cat'))
    .description('print a file (fs/readFile); --json prints {"dataBase64":…}')
    .argument('<path>', 'native path')
    .action((path: string, flags: ShortcutFlags & { json?: boolean }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const result = await broker.call('fs/readFile', { path: uri(path), sandbox }, { timeoutMs });
        if (flags.json) writeResultJson(deps.io.stdout, result);
        else deps.io.stdout.write(result.dataBase64);
      }),
    );
}
