import { escapeForTerminal } from './terminal-text.js';

/** The widest line a table prints: every line of doctor and demo fits a 100-column terminal. */
export const TABLE_MAX_COLUMNS = 100;

/**
 * Left-aligned text columns, two spaces apart, for the doctor and demo reports. Cells carry paths
 * and error messages, so each is escaped for the terminal (before measuring, so columns line up).
 * The last column wraps at word boundaries onto following lines, under itself, so that no line is
 * wider than `maxColumns` (a word longer than the room left is cut).
 */
export function formatTable(
  header: readonly string[],
  cells: readonly (readonly string[])[],
  maxColumns = TABLE_MAX_COLUMNS,
): string {
  const rows = cells.map((row) => row.map(escapeForTerminal));
  const last = header.length - 1;
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const lead = widths.slice(0, last).reduce((sum, width) => sum + width + 2, 0);
  const room = Math.max(maxColumns - lead, 20);
  widths[last] = Math.min(widths[last] ?? 0, room);
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  const wrapped = (row: readonly string[]) => {
    const [first = '', ...rest] = wrapText(row[last] ?? '', room);
    return [line([...row.slice(0, last), first]), ...rest.map((more) => `${' '.repeat(lead)}${more}`)];
  };
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.flatMap(wrapped)].join('\n');
}

/** Words into lines of at most `width` characters; a longer word is cut into pieces. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    let rest = word;
    while (rest.length > width) {
      if (current !== '') lines.push(current);
      current = '';
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    if (current === '') current = rest;
    else if (current.length + 1 + rest.length <= width) current = `${current} ${rest}`;
    else {
      lines.push(current);
      current = rest;
    }
  }
  lines.push(current);
  return lines;
}
