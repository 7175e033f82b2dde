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

function replaceTrimmedLines(text: string, oldText: string, newText: string): string | null {
  const lines = text.split('\n');
  const wanted = oldText.split('\n');
  for (let start = 0; start + wanted.length <= lines.length; start++) {
    if (!wanted.every((line, i) => line.trim() === (lines[start + i] as string).trim())) continue;
    const indent = leadingWhitespace(lines[start] as string);
    const replacement = newText.split('\n').map((line, i) => {
      if (i === 0) return indent + line.trimStart();
      const oldIndent = leadingWhitespace(wanted[i] ?? '');
      const newIndent = leadingWhitespace(line);
      if (oldIndent === '' || newIndent === '') return line;
      return indent + ' '.repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart();
    });
    lines.splice(start, wanted.length, ...replacement);
    return lines.join('\n');
  }
  return null;
}

export function toLf(text: string): string {
  return text.replaceAll('\r\n', '\n');
}

/** The git-style diff in a fence longer than any backtick run inside it, as the reference prints it. */
export function fencedDiff(before: string, after: string, path: string): string {
  const diff = createTwoFilesPatch(path, path, before, after, 'original', 'modified');
  let fence = '```';
  while (diff.includes(fence)) fence += '`';
  return `${fence}diff\n${diff}${fence}\n\n`;
}
