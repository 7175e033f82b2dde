import { LIMITS, type ParamsIn, type ResultOf } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { positiveInteger } from './broker-options.js';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

interface ReadFlags extends ShortcutFlags {
  json?: boolean;
  line?: number;
  limit?: number;
  head?: number;
  tail?: number;
  maxBytes?: number;
}

/** The stderr line after a window that `--max-bytes` (or the content cap) cut short. */
export function truncationNote(result: ResultOf<'fs/readTextFile'>, maxBytes: number): string {
  const last = result.startLine + result.lineCount - 1;
  const shown = result.lineCount === 0 ? 'no whole line' : `lines ${result.startLine}-${last}`;
  return `fs-sandbox: output cut at ${maxBytes} bytes: ${shown} of ${result.totalLines} shown; use --line/--limit for the rest\n`;
}

/**
 * `fs-sandbox read PATH`: a text file (UTF-8, or UTF-16 with a BOM) decoded, whole or a window of
 * lines; the text goes to stdout as it is, like `cat`, so it can be piped.
 */
export function registerReadCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'read'))
    .description('print a text file or some of its lines (fs/readTextFile)')
    .argument('<path>', 'native path')
    .option('--line <n>', 'first line to print (1-based)', positiveInteger)
    .option('--limit <n>', 'number of lines from --line', positiveInteger)
    .option('--head <n>', 'the first N lines', positiveInteger)
    .option('--tail <n>', 'the last N lines', positiveInteger)
    .option('--max-bytes <n>', 'print at most N bytes of text', positiveInteger)
    .action((path: string, flags: ReadFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const params: ParamsIn<'fs/readTextFile'> = {
          path: uri(path),
          sandbox,
          ...(flags.line === undefined ? {} : { line: flags.line }),
          ...(flags.limit === undefined ? {} : { limit: flags.limit }),
          ...(flags.head === undefined ? {} : { head: flags.head }),
          ...(flags.tail === undefined ? {} : { tail: flags.tail }),
          ...(flags.maxBytes === undefined ? {} : { maxBytes: flags.maxBytes }),
        };
        const result = await broker.call('fs/readTextFile', params, { timeoutMs });
        if (flags.json) {
          writeResultJson(deps.io.stdout, result);
          return;
        }
        deps.io.stdout.write(result.content);
        if (result.truncated)
          deps.io.stderr.write(truncationNote(result, flags.maxBytes ?? LIMITS.textMaxBytes));
      }),
    );
}
