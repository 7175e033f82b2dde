import { decodePathBytes, FsError } from '@fs-sandbox/policy/core';

/**
 * ripgrep's output read as it streams: complete records (JSON lines, or NUL-ended names) are split
 * off the chunks and `--json` lines parsed into the few event kinds fs/search uses. A record longer
 * than the bound (a gigantic single-line file) is not buffered on: the splitter reports the
 * overflow and the caller stops. ripgrep ends every record, so nothing is left after its exit.
 */

export class RecordSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly maxLineBytes: number,
    private readonly separator: number,
  ) {}

  /** The complete records in `chunk` (with what came before it), or null once a record passes the bound. */
  push(chunk: Buffer): Buffer[] | null {
    const records: Buffer[] = [];
    let start = 0;
    for (let end = chunk.indexOf(this.separator); end !== -1; end = chunk.indexOf(this.separator, start)) {
      const piece = chunk.subarray(start, end);
      if (this.pendingBytes + piece.length > this.maxLineBytes) return null;
      records.push(this.pendingBytes === 0 ? piece : Buffer.concat([...this.pending, piece]));
      this.pending = [];
      this.pendingBytes = 0;
      start = end + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length > 0) {
      if (this.pendingBytes + rest.length > this.maxLineBytes) return null;
      this.pending.push(rest);
      this.pendingBytes += rest.length;
    }
    return records;
  }
}

export interface LineEvent {
  type: 'match' | 'context';
  /** Native path (non-UTF-8 bytes escaped, path-bytes.ts). */
  path: string;
  lineNumber: number;
  /** The line's bytes, terminator included as ripgrep sent it. */
  line: Buffer;
  /** Byte offsets into `line` (empty for context lines). */
  submatches: Array<{ start: number; end: number }>;
}

export type RipgrepEvent =
  | LineEvent
  | { type: 'end'; path: string; bytesSearched: number }
  | { type: 'summary'; searches: number; bytesSearched: number };

/** ripgrep's text-or-bytes value: `{text}` when valid UTF-8, else `{bytes}` in base64. */
function bytesOf(value: unknown): Buffer {
  const data = value as { text?: unknown; bytes?: unknown } | null;
  if (typeof data?.text === 'string') return Buffer.from(data.text, 'utf8');
  if (typeof data?.bytes === 'string') return Buffer.from(data.bytes, 'base64');
  throw new FsError('internal_error', 'ripgrep sent a JSON value that is neither text nor bytes');
}

function pathOf(value: unknown): string {
  const data = value as { text?: unknown } | null;
  return typeof data?.text === 'string' ? data.text : decodePathBytes(bytesOf(value));
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** One line of ripgrep's JSON output as an event, or null for the kinds fs/search does not use (`begin`). */
export function parseRipgrepEvent(record: Buffer): RipgrepEvent | null {
  let message: { type?: unknown; data?: Record<string, unknown> };
  try {
    message = JSON.parse(record.toString('utf8'));
  } catch {
    throw new FsError('internal_error', 'ripgrep sent a line that is not JSON');
  }
  const data = message.data ?? {};
  switch (message.type) {
    case 'match':
    case 'context': {
      const submatches = Array.isArray(data.submatches) ? data.submatches : [];
      return {
        type: message.type,
        path: pathOf(data.path),
        lineNumber: count(data.line_number),
        line: bytesOf(data.lines),
        submatches: submatches.map((sub: { start?: unknown; end?: unknown }) => ({
          start: count(sub.start),
          end: count(sub.end),
        })),
      };
    }
    case 'end': {
      const stats = (data.stats ?? {}) as Record<string, unknown>;
      return { type: 'end', path: pathOf(data.path), bytesSearched: count(stats.bytes_searched) };
    }
    case 'summary': {
      const stats = (data.stats ?? {}) as Record<string, unknown>;
      return { type: 'summary', searches: count(stats.searches), bytesSearched: count(stats.bytes_searched) };
    }
    default:
      return null;
  }
}
