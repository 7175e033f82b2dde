/**
 * Finds where a run of lines occurs in a file, with the reference's widening tolerance: exact, then
 * ignoring trailing whitespace, then ignoring surrounding whitespace, then also reading typographic
 * dashes, quotes and spaces as their ASCII forms (models write `-` where the file has `–`). The
 * first pass that matches anywhere wins. With `endOfFile` the run must end the file.
 */

const PUNCTUATION: Record<string, string> = {};
for (const dash of '\u2010\u2011\u2012\u2013\u2014\u2015\u2212') PUNCTUATION[dash] = '-';
for (const quote of '\u2018\u2019\u201A\u201B') PUNCTUATION[quote] = "'";
for (const quote of '\u201C\u201D\u201E\u201F') PUNCTUATION[quote] = '"';
for (const space of '\u00A0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000') {
  PUNCTUATION[space] = ' ';
}

// Unicode White_Space, which the reference trims: JavaScript's trim() also strips U+FEFF (a
// byte order mark would then match as nothing) and keeps U+0085.
const WHITE_SPACE =
  '[\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]';
const LEADING = new RegExp(`^${WHITE_SPACE}+`);
const TRAILING = new RegExp(`${WHITE_SPACE}+$`);

const trimEnd = (line: string) => line.replace(TRAILING, '');
const trim = (line: string) => trimEnd(line).replace(LEADING, '');

function asciiPunctuation(line: string): string {
  let out = '';
  for (const char of trim(line)) out += PUNCTUATION[char] ?? char;
  return out;
}

const PASSES: ReadonlyArray<(line: string) => string> = [(line) => line, trimEnd, trim, asciiPunctuation];

export function seekLines(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  endOfFile: boolean,
): number | null {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return null;
  const from = endOfFile ? lines.length - pattern.length : start;
  for (const view of PASSES) {
    const wanted = pattern.map(view);
    for (let at = from; at <= lines.length - pattern.length; at++) {
      if (wanted.every((line, offset) => view(lines[at + offset] as string) === line)) return at;
    }
  }
  return null;
}
