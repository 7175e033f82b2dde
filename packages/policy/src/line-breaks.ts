/**
 * How the project reads line breaks, for every text method (fs/readTextFile, fs/edit,
 * fs/applyPatch): a line is a run ending in LF, its break CRLF when a CR precedes the LF. Each
 * method keeps a file's own breaks with these; what differs is only the break a method gives the
 * lines it inserts (see each method's docs).
 */

/** What a text's line breaks are: all `crlf`, all `lf`, `mixed`, or `none` without any. */
export type LineBreakKind = 'crlf' | 'lf' | 'mixed' | 'none';

export function lineBreakKindOf(text: string): LineBreakKind {
  let crlf = 0;
  let lf = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (at > 0 && text.charCodeAt(at - 1) === 0x0d) crlf++;
    else lf++;
  }
  if (crlf > 0 && lf > 0) return 'mixed';
  if (crlf > 0) return 'crlf';
  return lf > 0 ? 'lf' : 'none';
}

/** The break of the text's first terminated line (LF when it has none). */
export function firstLineBreak(text: string): '\n' | '\r\n' {
  const first = text.indexOf('\n');
  return first > 0 && text.charCodeAt(first - 1) === 0x0d ? '\r\n' : '\n';
}

/** The text's lines, each with its own line break (the last one may have none). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', start)) {
    lines.push(text.slice(start, at + 1));
    start = at + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** A line without its break. */
export function withoutBreak(line: string): string {
  if (line.endsWith('\r\n')) return line.slice(0, -2);
  return line.endsWith('\n') ? line.slice(0, -1) : line;
}
