import { resolve } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { type CliDeps, EXIT } from './cli-io.js';
import { displayedPath, wholeNumber } from './grep-command.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

interface GlobFlags extends ShortcutFlags {
  hidden?: boolean;
  ignore: boolean;
  max?: number;
  json?: boolean;
}

const GLOB_CHARACTERS = /[*?[\]{}!]/;

/**
 * The operands as patterns and the directory: of two or more, the last is the directory when it
 * has no glob character (`glob '*.ts' src`); otherwise every operand is a pattern, below `.`.
 */
export function globOperands(operands: string[]): { patterns: string[]; path: string } {
  const last = operands[operands.length - 1] as string;
  if (operands.length > 1 && !GLOB_CHARACTERS.test(last))
    return { patterns: operands.slice(0, -1), path: last };
  return { patterns: operands, path: '.' };
}

/** `fs-sandbox glob PATTERN… [PATH]`: fs/glob (ripgrep inside the sandbox), one path per line, newest first. */
export function registerGlobCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'glob'))
    .description(
      'list the files below PATH matching the globs (ripgrep syntax), newest first (fs/glob; ignore files and hidden names honoured unless asked)',
    )
    .argument(
      '<pattern...>',
      'globs relative to PATH (`**/*.ts`, `src/*.{md,txt}`; `!` excludes); a last operand without glob characters is PATH (default .)',
    )
    .option('--hidden', 'list hidden files and directories too')
    .option('--no-ignore', 'list files that .gitignore, .ignore or .git/info/exclude exclude')
    .option(
      '--max <n>',
      `entries to return (default ${LIMITS.globDefaultResults}, at most ${LIMITS.globMaxResults})`,
      wholeNumber(1, LIMITS.globMaxResults),
    )
    .action((operands: string[], flags: GlobFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const { patterns, path } = globOperands(operands);
        const params = {
          path: uri(path),
          patterns,
          includeIgnored: !flags.ignore,
          includeHidden: flags.hidden === true,
          maxResults: flags.max ?? LIMITS.globDefaultResults,
          sandbox,
        };
        const result = await broker.call('fs/glob', params, { timeoutMs });
        if (flags.json) writeResultJson(deps.io.stdout, result);
        else {
          const cwd = resolve(deps.io.cwd);
          for (const entry of result.entries) {
            deps.io.stdout.write(`${escapeForTerminal(displayedPath(cwd, entry.path))}\n`);
          }
        }
        if (result.truncated) {
          deps.io.stderr.write(
            'fs-sandbox: glob: the listing was cut short by a limit (--max, size or time)\n',
          );
        }
        if (result.entries.length === 0) deps.setExitCode(EXIT.failed);
      }),
    );
}
