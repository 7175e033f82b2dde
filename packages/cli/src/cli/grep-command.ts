import { relative, resolve } from 'node:path';
import { currentHostOs, LIMITS, pathUriToNative, type ResultOf } from '@fs-sandbox/policy';
import { type Command, InvalidArgumentError } from 'commander';
import { type CliDeps, EXIT } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

interface GrepFlags extends ShortcutFlags {
  fixedStrings?: boolean;
  ignoreCase?: boolean;
  glob: string[];
  hidden?: boolean;
  ignore: boolean;
  context?: number;
  max?: number;
  json?: boolean;
}

/** A whole number from `least` to `most`, for commander. */
export function wholeNumber(least: number, most: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < least || value > most) {
      throw new InvalidArgumentError(`must be a whole number from ${least} to ${most}`);
    }
    return value;
  };
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A result path for people: relative to the cwd, as ripgrep prints it. */
export function displayedPath(cwd: string, uri: string): string {
  return relative(cwd, pathUriToNative(uri, currentHostOs())) || '.';
}

/**
 * ripgrep's `--no-heading` form: `path:line:text` for a match, `path-line-text` for a context line,
 * `--` between groups that do not touch; every line escaped for the terminal.
 */
export function formatGrep(cwd: string, result: ResultOf<'fs/search'>): string {
  if (result.files !== undefined) {
    return result.files.map((uri) => `${escapeForTerminal(displayedPath(cwd, uri))}\n`).join('');
  }
  const out: string[] = [];
  let last: { path: string; line: number } | null = null;
  for (const match of result.matches) {
    const path = displayedPath(cwd, match.path);
    const lines = [
      ...(match.before ?? []).map((line) => ({ ...line, mark: '-' })),
      { lineNumber: match.lineNumber, line: match.line, mark: ':' },
      ...(match.after ?? []).map((line) => ({ ...line, mark: '-' })),
    ];
    for (const line of lines) {
      if (last !== null && last.path === path && line.lineNumber <= last.line) continue;
      const touches = last !== null && last.path === path && line.lineNumber === last.line + 1;
      if (last !== null && !touches && (match.before !== undefined || match.after !== undefined))
        out.push('--\n');
      out.push(`${escapeForTerminal(`${path}${line.mark}${line.lineNumber}${line.mark}${line.line}`)}\n`);
      last = { path, line: line.lineNumber };
    }
  }
  return out.join('');
}

/**
 * `fs-sandbox grep PATTERN [PATH]`: fs/search (ripgrep inside the sandbox) printed like
 * `rg --no-heading`. Exit 1 when nothing matched, as grep and rg do; a result cut short by a limit
 * is said on stderr.
 */
export function registerGrepCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'grep'))
    .description(
      'search file contents below PATH with ripgrep inside the sandbox, printing path:line:text (fs/search; ignore files and hidden names honoured unless asked)',
    )
    .argument('<pattern>', 'ripgrep regex (or a literal with -F)')
    .argument('[path]', 'native path of a directory or file', '.')
    .option('-F, --fixed-strings', 'PATTERN is a literal string')
    .option('-i, --ignore-case', 'match case-insensitively')
    .option(
      '-g, --glob <glob>',
      'only files matching this glob (ripgrep syntax, `!` excludes); repeatable',
      collect,
      [],
    )
    .option('--hidden', 'search hidden files and directories too')
    .option('--no-ignore', 'search files that .gitignore, .ignore or .git/info/exclude exclude')
    .option(
      '-C, --context <n>',
      `lines of context around each match (at most ${LIMITS.searchMaxContextLines})`,
      wholeNumber(0, LIMITS.searchMaxContextLines),
    )
    .option(
      '--max <n>',
      `matches to return (default ${LIMITS.searchDefaultResults}, at most ${LIMITS.searchMaxResults})`,
      wholeNumber(1, LIMITS.searchMaxResults),
    )
    .action((pattern: string, path: string, flags: GrepFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const params = {
          path: uri(path),
          pattern,
          fixedStrings: flags.fixedStrings === true,
          caseSensitive: flags.ignoreCase !== true,
          include: flags.glob,
          includeIgnored: !flags.ignore,
          includeHidden: flags.hidden === true,
          contextLines: flags.context ?? 0,
          maxResults: flags.max ?? LIMITS.searchDefaultResults,
          sandbox,
        };
        const result = await broker.call('fs/search', params, { timeoutMs });
        if (flags.json) writeResultJson(deps.io.stdout, result);
        else deps.io.stdout.write(formatGrep(resolve(deps.io.cwd), result));
        if (result.truncated) {
          deps.io.stderr.write(
            'fs-sandbox: grep: the result was cut short by a limit (--max, size or time)\n',
          );
        }
        if (result.matches.length === 0 && (result.files ?? []).length === 0) deps.setExitCode(EXIT.failed);
      }),
    );
}
