import { ansiCQuote, hasTerminalControls } from './terminal-text.js';

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * POSIX shell quoting, so a printed command can be pasted back exactly. A word with control or bidi
 * characters (a path can hold them) gets ANSI-C quoting instead, so they never reach the terminal raw.
 */
export function shellQuote(word: string): string {
  if (PLAIN.test(word)) return word;
  if (hasTerminalControls(word)) return ansiCQuote(word);
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * A command as shell text, one option (with its values) per line. Purely for reading: the words
 * and their order are exactly the argv the broker passes.
 */
export function formatCommand(file: string, args: readonly string[]): string {
  const lines: string[][] = [[file]];
  let afterSeparator = false;
  for (const arg of args) {
    const current = lines[lines.length - 1] as string[];
    if (!afterSeparator && arg.startsWith('--')) lines.push([arg]);
    else current.push(arg);
    if (arg === '--') afterSeparator = true;
  }
  return lines.map((words) => words.map(shellQuote).join(' ')).join(' \\\n  ');
}
