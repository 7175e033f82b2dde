import { FsError } from '@fs-sandbox/policy';
import { createTwoFilesPatch } from 'diff';

export interface LooseEdit {
  oldText: string;
  newText: string;
}

const leadingWhitespace = (line: string) => /^\s*/.exec(line)?.[0] ?? '';

/**
 * The reference's edit semantics, applied in order to LF text: the first exact occurrence of
 * `oldText` is replaced; failing that, the first run of lines equal to `oldText`'s lines once each
 * is trimmed, re-indented to that run's first line (later lines keep their indentation relative to
 * `oldText`'s). An edit that matches neither way refuses the whole edit (`text_not_found`).
 */
export function applyLooseEdits(text: string, edits: readonly LooseEdit[]): string {
  let current = text;
  for (const edit of edits) {
    const oldText = toLf(edit.oldText);
    const newText = toLf(edit.newText);
    const at = current.indexOf(oldText);
    if (at !== -1) {
      current = current.slice(0, at) + newText + current.slice(at + oldText.length);
      continue;
    }
    const replaced = replaceTrimmedLines(current, oldText, newText);
    if (replaced === null)
      throw new FsError('text_not_found', `Could not find exact match for edit:\n${edit.oldText}`);
    current = replaced;
  }
  return current;
}

/**
 * Where `wanted` first occurs as a run of `lines` (both trimmed), or -1: Knuth-Morris-Pratt over
 * lines, so the work is linear in the two counts. Trying each start in turn was O(file lines x
 * oldText lines): a 30 000-line oldText that nearly matches everywhere held the server for minutes.
 */
function firstRun(lines: readonly string[], wanted: readonly string[]): number {
  if (wanted.length === 0) return -1;
  // fallback[i]: the length of the longest proper prefix of wanted[0..i] that is also its suffix.
  const fallback = new Array<number>(wanted.length).fill(0);
  for (let i = 1, k = 0; i < wanted.length; i++) {
    while (k > 0 && wanted[i] !== wanted[k]) k = fallback[k - 1] as number;
    if (wanted[i] === wanted[k]) k++;
    fallback[i] = k;
  }
  for (let i = 0, k = 0; i < lines.length; i++) {
    while (k > 0 && lines[i] !== wanted[k]) k = fallback[k - 1] as number;
    if (lines[i] === wanted[k]) k++;
    if (k === wanted.length) return i - k + 1;
  }
  return -1;
}

function replaceTrimmedLines(text: string, oldText: string, newText: string): string | null {
  const lines = text.split('\n');
  const wanted = oldText.split('\n');
  const start = firstRun(
    lines.map((line) => line.trim()),
    wanted.map((line) => line.trim()),
  );
  if (start === -1) return null;
  const indent = leadingWhitespace(lines[start] as string);
  const replacement = newText.split('\n').map((line, i) => {
    if (i === 0) return indent + line.trimStart();
    const oldIndent = leadingWhitespace(wanted[i] ?? '');
    const newIndent = leadingWhitespace(line);
    if (oldIndent === '' || newIndent === '') return line;
    return indent + ' '.repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart();
  });
  // concat, not splice(...replacement): spreading a long newText would overflow the call stack.
  return lines
    .slice(0, start)
    .concat(replacement, lines.slice(start + wanted.length))
    .join('\n');
}

function lineCount(text: string): number {
  let count = text === '' || text.endsWith('\n') ? 0 : 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

export function toLf(text: string): string {
  return text.replaceAll('\r\n', '\n');
}

/**
 * How long the diff may take. Myers' diff is O((lines) x (changed lines)) and runs on the server's
 * only thread: a 30 000-line replacement in a large file took minutes while every other call waited.
 */
const DIFF_TIMEOUT_MS = 2_000;

/**
 * The git-style diff in a fence longer than any backtick run inside it, as the reference prints it;
 * past DIFF_TIMEOUT_MS a line saying so and how many lines each side has (the edit itself is made).
 */
export function fencedDiff(before: string, after: string, path: string): string {
  const diff =
    createTwoFilesPatch(path, path, before, after, 'original', 'modified', { timeout: DIFF_TIMEOUT_MS }) ??
    `(no diff: comparing ${lineCount(before)} lines with ${lineCount(after)} took more than ${DIFF_TIMEOUT_MS} ms)\n`;
  let fence = '```';
  while (diff.includes(fence)) fence += '`';
  return `${fence}diff\n${diff}${fence}\n\n`;
}
