import type { HelperResultOf } from '@fs-sandbox/policy';
import { encodePathBytes, type HostOs, LIMITS, nativeToPathUri } from '@fs-sandbox/policy/core';
import type { LineEvent, RipgrepEvent } from './rg-stream.js';
import { type SearchMatch, showLine, type WireLine } from './search-lines.js';

type SearchResult = HelperResultOf<'fs/search'>;
type ContextLine = NonNullable<SearchMatch['before']>[number];

interface FileLine {
  lineNumber: number;
  fields: WireLine;
  match: Pick<SearchMatch, 'submatches'> | null;
}

interface Kept {
  sortKey: Buffer;
  match: SearchMatch;
}

/**
 * Builds the fs/search result from ripgrep's events, within the bounds: `maxResults` matches (or
 * files with `filesOnly`) and LIMITS.searchMaxResponseBytes of reply. ripgrep writes each file's
 * events together, so a file's lines are kept until its `end` and then turned into matches with
 * their context. Order is restored at the end: ripgrep's threads finish files in any order.
 */
export class SearchCollector {
  private readonly kept: Kept[] = [];
  private readonly files: Array<{ sortKey: Buffer; uri: string }> = [];
  private lines: FileLine[] = [];
  private currentPath: string | null = null;
  private matchCount = 0;
  private responseBytes = 0;
  private endedFiles = 0;
  private endedBytes = 0;
  private summary: { searches: number; bytesSearched: number } | null = null;
  truncated = false;

  constructor(
    private readonly options: { maxResults: number; contextLines: number; filesOnly: boolean },
    private readonly os: HostOs,
  ) {}

  /** Takes one event; false once a bound is reached (the caller stops ripgrep). */
  add(event: RipgrepEvent): boolean {
    switch (event.type) {
      case 'match':
      case 'context':
        return this.addLine(event);
      case 'end':
        this.endedFiles += 1;
        this.endedBytes += event.bytesSearched;
        return this.finishFile();
      case 'summary':
        this.summary = event;
        return true;
    }
  }

  private addLine(event: LineEvent): boolean {
    if (event.type === 'match') {
      if (this.matchCount >= this.options.maxResults) return this.stop();
      this.matchCount += 1;
    }
    if (this.currentPath !== event.path && !this.finishFile()) return false;
    this.currentPath = event.path;
    if (this.options.filesOnly) return true;
    const shown = showLine(event.line);
    const match =
      event.type === 'match'
        ? {
            submatches: event.submatches.map(({ start, end }) => ({
              start: shown.offsetOf(start),
              end: shown.offsetOf(end),
            })),
          }
        : null;
    this.lines.push({ lineNumber: event.lineNumber, fields: shown.fields, match });
    return true;
  }

  /** The current file's matches into the result; false when the reply would pass its byte bound. */
  private finishFile(): boolean {
    const path = this.currentPath;
    if (path === null) return true;
    this.currentPath = null;
    const lines = this.lines;
    this.lines = [];
    const uri = nativeToPathUri(path, this.os);
    const sortKey = encodePathBytes(path);
    if (this.options.filesOnly) {
      if (!this.reserve(uri.length + 3)) return false;
      this.files.push({ sortKey, uri });
      return true;
    }
    const context = this.options.contextLines;
    for (const [index, line] of lines.entries()) {
      if (line.match === null) continue;
      const match: SearchMatch = { path: uri, lineNumber: line.lineNumber, ...line.fields, ...line.match };
      if (context > 0) {
        match.before = neighbours(lines, index, -1, context);
        match.after = neighbours(lines, index, 1, context);
      }
      if (!this.reserve(Buffer.byteLength(JSON.stringify(match)) + 1)) return false;
      this.kept.push({ sortKey, match });
    }
    return true;
  }

  private reserve(bytes: number): boolean {
    if (this.responseBytes + bytes > LIMITS.searchMaxResponseBytes) return this.stop();
    this.responseBytes += bytes;
    return true;
  }

  private stop(): false {
    this.truncated = true;
    return false;
  }

  /** The result once ripgrep has exited or been stopped. */
  finish(elapsedMs: number): SearchResult {
    // A file stopped mid-way keeps what was counted (finishing it stays within the byte bound).
    this.finishFile();
    const byPath = (a: { sortKey: Buffer }, b: { sortKey: Buffer }) => Buffer.compare(a.sortKey, b.sortKey);
    this.kept.sort((a, b) => byPath(a, b) || a.match.lineNumber - b.match.lineNumber);
    this.files.sort(byPath);
    const result: SearchResult = {
      matches: this.kept.map((kept) => kept.match),
      truncated: this.truncated,
      stats: {
        filesSearched: this.summary?.searches ?? this.endedFiles,
        bytesSearched: this.summary?.bytesSearched ?? this.endedBytes,
        elapsedMs,
      },
    };
    if (this.options.filesOnly) result.files = this.files.map((file) => file.uri);
    return result;
  }
}

/** Up to `count` lines (matches and context alike) right before (-1) or after (1) line `index`, in file order. */
function neighbours(lines: FileLine[], index: number, step: -1 | 1, count: number): ContextLine[] {
  const center = (lines[index] as FileLine).lineNumber;
  const found: ContextLine[] = [];
  for (let i = index + step; i >= 0 && i < lines.length; i += step) {
    const line = lines[i] as FileLine;
    if (Math.abs(line.lineNumber - center) > count) break;
    found.push({ lineNumber: line.lineNumber, ...line.fields });
  }
  return step === -1 ? found.reverse() : found;
}
