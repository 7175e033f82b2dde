import { FsError, splitLines } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';

export interface TextEdit {
  oldText: string;
  newText: string;
  replaceAll: boolean;
}

/** Line numbers an ambiguous match lists at most (the count is always exact). */
const LISTED_LINES = 20;

/** 1-based line of the character at `index`. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line++;
  return line;
}

/** Start indices of the non-overlapping occurrences of `needle`. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
}

/**
 * The line most like the first non-blank line of `oldText`, as a hint for text_not_found: an equal
 * line once whitespace is ignored wins, else the one sharing the longest start and end. Null when
 * nothing shares at least half of it.
 */
function closestLine(text: string, oldText: string): { line: number; text: string } | null {
  const wanted = squeeze(oldText.split('\n').find((line) => line.trim() !== '') ?? '');
  if (wanted === '') return null;
  let best = { line: 0, text: '', score: 0 };
  const lines = splitLines(text);
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index] as string;
    const candidate = squeeze(raw);
    const score = candidate === wanted ? Number.POSITIVE_INFINITY : sharedEnds(candidate, wanted);
    if (score > best.score) best = { line: index + 1, text: raw.replace(/\r?\n$/, ''), score };
  }
  return best.score * 2 >= wanted.length ? { line: best.line, text: best.text } : null;
}

function squeeze(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

/** Characters `a` and `b` share at their start plus at their end (never more than the shorter one). */
function sharedEnds(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length);
  let start = 0;
  while (start < shorter && a[start] === b[start]) start++;
  let end = 0;
  while (end < shorter - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return start + end;
}

function notFound(path: string, text: string, edit: TextEdit, index: number): FsError {
  const hint = closestLine(text, edit.oldText);
  const where = hint === null ? '' : `; the closest line is ${hint.line}: ${JSON.stringify(hint.text)}`;
  return new FsError(
    'text_not_found',
    `edits[${index}].oldText was not found in ${displayPath(path)}${where}`,
    { editIndex: index, ...(hint === null ? {} : { closestLine: hint.line }) },
  );
}

function ambiguous(path: string, text: string, found: number[], index: number): FsError {
  const lines = found.slice(0, LISTED_LINES).map((at) => lineAt(text, at));
  const more = found.length > lines.length ? ', …' : '';
  return new FsError(
    'ambiguous_text_match',
    `edits[${index}].oldText occurs ${found.length} times in ${displayPath(path)} (lines ${lines.join(', ')}${more}); give more context or set replaceAll`,
    { editIndex: index, count: found.length, lines },
  );
}

/**
 * Applies the edits in order, each to the text the previous ones left, and fails on the first that
 * does not apply (nothing is written then): not found (text_not_found), or found more than once
 * without `replaceAll` (ambiguous_text_match).
 */
export function applyEdits(
  path: string,
  original: string,
  edits: readonly TextEdit[],
): { text: string; replacements: number } {
  let text = original;
  let replacements = 0;
  edits.forEach((edit, index) => {
    const found = occurrences(text, edit.oldText);
    if (found.length === 0) throw notFound(path, text, edit, index);
    if (found.length > 1 && !edit.replaceAll) throw ambiguous(path, text, found, index);
    // split/join, not replace(): `$&` and friends in newText are literal text.
    text = text.split(edit.oldText).join(edit.newText);
    replacements += found.length;
  });
  return { text, replacements };
}
