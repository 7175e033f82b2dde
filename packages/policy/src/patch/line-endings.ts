/**
 * A file's line ending, kept across an update: a CRLF file stays CRLF. The patch's lines never
 * carry CR (the parser drops it), so the file is matched in LF form and written back in its own.
 * The first line ending decides, as editors do for a mixed file.
 */
export type LineEnding = '\n' | '\r\n';

export function lineEndingOf(text: string): LineEnding {
  const first = text.indexOf('\n');
  return first > 0 && text[first - 1] === '\r' ? '\r\n' : '\n';
}

export function toLf(text: string, ending: LineEnding): string {
  return ending === '\n' ? text : text.replaceAll('\r\n', '\n');
}

export function fromLf(text: string, ending: LineEnding): string {
  return ending === '\n' ? text : text.replaceAll('\n', '\r\n');
}
