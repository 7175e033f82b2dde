import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `fs-sandbox stat PATH`: the metadata as JSON. */
export function registerStatCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'stat')
    .description('show metadata (fs/getMetadata)')
    .argument('<path>', 'native path')
    .action((path: string, flags: ShortcutFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const result = await broker.call('fs/getMetadata', { path: uri(path), sandbox }, { timeoutMs });
        deps.io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      }),
    );
}
