import { FsError } from '../error-kinds.js';
import { firstLineBreak, splitLines, withoutBreak } from '../line-breaks.js';
import type { PatchChunk } from './parse-patch.js';
import { seekLines } from './seek-lines.js';

interface Replacement {
  start: number;
  removed: number;
  /** Lines with their breaks. */
  inserted: readonly string[];
}

function conflict(message: string, path: string, chunk: number): FsError {
  return new FsError('patch_conflict', message, { path, chunk });
}

/**
 * The text an update hunk makes of a file, as the reference computes it: each chunk is sought after
 * the previous one (after its `@@` context line when it has one), a pure addition goes at the end,
 * and the result always ends with a newline. Lines are matched without their breaks; the lines
 * left alone keep their own (a CRLF file stays CRLF, a mixed one stays mixed), and the lines the
 * patch inserts take the break of the file's first line. A byte order mark is part of the first
 * line, as the reference reads it. `shownPath` is the file as errors name it. Throws
 * `patch_conflict` naming the file and the chunk (1-based) when the lines are not there.
 */
export function applyChunks(original: string, chunks: readonly PatchChunk[], shownPath: string): string {
  const physical = splitLines(original);
  const lines = physical.map(withoutBreak);
  const newline = firstLineBreak(original);
  const replacements: Replacement[] = [];
  let cursor = 0;
  chunks.forEach((chunk, index) => {
    if (chunk.context !== null) {
      const at = seekLines(lines, [chunk.context], cursor, false);
      if (at === null) {
        throw conflict(`Failed to find context '${chunk.context}' in ${shownPath}`, shownPath, index + 1);
      }
      cursor = at + 1;
    }
    if (chunk.oldLines.length === 0) {
      const atEnd = lines.at(-1) === '' ? lines.length - 1 : lines.length;
      replacements.push({ start: atEnd, removed: 0, inserted: chunk.newLines.map((line) => line + newline) });
      return;
    }
    let pattern = chunk.oldLines;
    let inserted = chunk.newLines;
    let at = seekLines(lines, pattern, cursor, chunk.endOfFile);
    // A trailing empty old line stands for the file's final newline, which the split dropped.
    if (at === null && pattern.at(-1) === '') {
      pattern = pattern.slice(0, -1);
      if (inserted.at(-1) === '') inserted = inserted.slice(0, -1);
      at = seekLines(lines, pattern, cursor, chunk.endOfFile);
    }
    if (at === null) {
      throw conflict(
        `Failed to find expected lines in ${shownPath}:\n${chunk.oldLines.join('\n')}`,
        shownPath,
        index + 1,
      );
    }
    const found = at;
    const removed = pattern.length;
    // A context line stays as the file has it (its own spacing and break); added lines take `newline`.
    const kept = (line: string, index: number): string => {
      const from = chunk.keptFrom[index];
      return from == null || from >= removed ? line + newline : (physical[found + from] as string);
    };
    replacements.push({ start: at, removed, inserted: inserted.map(kept) });
    cursor = at + removed;
  });
  replacements.sort((a, b) => a.start - b.start);
  for (const { start, removed, inserted } of replacements.reverse()) {
    physical.splice(start, removed, ...inserted);
  }
  return physical.map((line) => (line.endsWith('\n') ? line : line + newline)).join('');
}
