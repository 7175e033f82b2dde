import type { ParamsIn } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeLines } from './terminal-text.js';

interface EditFlags extends ShortcutFlags {
  json?: boolean;
  old: string;
  new: string;
  all?: boolean;
  dryRun?: boolean;
  expectSha256?: string;
}

/**
 * `fs-sandbox edit PATH --old TEXT --new TEXT`: one replacement (every occurrence with `--all`),
 * printing the unified diff. The diff shows file content, so it is escaped for the terminal.
 */
export function registerEditCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'edit'))
    .description('replace text in a text file atomically and print the diff (fs/edit)')
    .argument('<path>', 'native path')
    .requiredOption('--old <text>', 'the text to replace (it must occur exactly once unless --all)')
    .requiredOption('--new <text>', 'the replacement text')
    .option('--all', 'replace every occurrence')
    .option('--dry-run', 'print the diff, write nothing')
    .option('--expect-sha256 <hex>', 'fail unless the file currently has this SHA-256 (expectedSha256)')
    .action((path: string, flags: EditFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const params: ParamsIn<'fs/edit'> = {
          path: uri(path),
          sandbox,
          edits: [{ oldText: flags.old, newText: flags.new, replaceAll: flags.all === true }],
          dryRun: flags.dryRun === true,
          ...(flags.expectSha256 === undefined ? {} : { expectedSha256: flags.expectSha256 }),
        };
        const result = await broker.call('fs/edit', params, { timeoutMs });
        if (flags.json) {
          writeResultJson(deps.io.stdout, result);
          return;
        }
        deps.io.stdout.write(escapeLines(result.diff));
        if (flags.dryRun) deps.io.stderr.write('fs-sandbox: dry run: nothing was written\n');
      }),
    );
}
