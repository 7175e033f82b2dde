import { escapeForTerminal } from './terminal-text.js';

/**
 * Left-aligned text columns, two spaces apart, for the doctor and demo reports. Cells carry paths
 * and error messages, so each is escaped for the terminal (before measuring, so columns line up).
 */
export function formatTable(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(escapeForTerminal));
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}
