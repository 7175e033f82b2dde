/**
 * Progress of a long tree operation (a recursive fs/copy, fs/remove, a move across file systems),
 * as the helper reports it while it runs: entries `checked` by the walk that decides whether the
 * whole operation may go ahead, their `total` once that walk is over, then entries `done`. A
 * sandboxed helper writes it on stderr, one line at a time, which the broker takes out of the
 * stderr it keeps for error messages. Reports of the running counts are thinned out; the total is
 * always sent.
 */
export type TreeProgressPhase = 'checked' | 'total' | 'done';

export interface TreeProgress {
  phase: TreeProgressPhase;
  entries: number;
}

const PROGRESS_PREFIX = 'fs-sandbox:progress ';
const PROGRESS_LINE = /^fs-sandbox:progress (checked|total|done) (\d{1,15})$/;

export function progressLine(progress: TreeProgress): string {
  return `${PROGRESS_PREFIX}${progress.phase} ${progress.entries}\n`;
}

/** The progress a stderr line (without its newline) reports, or null for any other line. */
export function parseProgressLine(line: string): TreeProgress | null {
  const match = PROGRESS_LINE.exec(line);
  if (match === null) return null;
  return { phase: match[1] as TreeProgressPhase, entries: Number(match[2]) };
}
