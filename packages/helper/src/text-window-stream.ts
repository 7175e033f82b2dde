import { FsError, type LineBreakKind } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import type { RegularFile } from './open-regular-file.js';
import { type TextEncoding, type TextResult, textTooLarge } from './text-codec.js';

/**
 * fs/readTextFile's window of a text file too large to decode whole (over LIMITS.textMaxBytes):
 * the file is read in chunks, so memory stays at one chunk plus the window's content whatever
 * the file's size. One pass over the whole file counts its line breaks (so `totalLines`,
 * `startLine` and `lineEnding` describe the whole file, as for a small one); only the window's
 * bytes are decoded, and only they are checked to be text. `sha256` is left out: hashing every
 * byte would cost as much again, and its use (fs/edit's and fs/writeFile's `expectedSha256`) is
 * for texts fs/edit can read whole. A `tail` finds its first line by reading back from the end.
 * The file is taken as it was when opened: bytes appended since (a live log) are not read.
 */

export type StreamedText = Omit<TextResult, 'sha256'>;

/** The window as the helper's params give it, 0-based: `first` line and at most `count` lines. */
export type LineWindow = { kind: 'tail'; count: number } | { kind: 'from'; first: number; count: number };

export interface StreamOptions {
  /** Bytes read per call; even, so a UTF-16 code unit never straddles two reads (tests use small ones). */
  chunkBytes: number;
  /** Most UTF-8 bytes of `content`. */
  maxBytes: number;
}

/** How line breaks look in the bytes: code units of one byte (UTF-8) or two (UTF-16, either order). */
interface Layout {
  encoding: TextEncoding;
  bom: boolean;
  /** Where the text starts (after the BOM). */
  start: number;
  unit: 1 | 2;
  /** Byte offset of the LF byte inside a code unit (the CR's is the same). */
  lowByte: 0 | 1;
}

const LF = 0x0a;
const CR = 0x0d;

async function readAt(file: RegularFile, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

async function layoutOf(file: RegularFile, path: string): Promise<Layout> {
  const head = await readAt(file, 0, 3);
  if (head[0] === 0xff && head[1] === 0xfe)
    return { encoding: 'utf-16le', bom: true, start: 2, unit: 2, lowByte: 0 };
  if (head[0] === 0xfe && head[1] === 0xff)
    return { encoding: 'utf-16be', bom: true, start: 2, unit: 2, lowByte: 1 };
  const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
  if (file.size > Number.MAX_SAFE_INTEGER) throw textTooLarge(path, 'is larger than any offset');
  return { encoding: 'utf-8', bom, start: bom ? 3 : 0, unit: 1, lowByte: 0 };
}

/** Whether the code unit at `at` (an offset into `bytes`) is `byte` (LF or CR). */
function unitIs(bytes: Buffer, at: number, layout: Layout, byte: number): boolean {
  if (layout.unit === 1) return bytes[at] === byte;
  return bytes[at + layout.lowByte] === byte && bytes[at + 1 - layout.lowByte] === 0;
}

/** Offsets (into `bytes`, which starts at a code unit) of each LF code unit, in order. */
function* lineFeeds(bytes: Buffer, layout: Layout): Generator<number> {
  for (let at = bytes.indexOf(LF); at !== -1; at = bytes.indexOf(LF, at + 1)) {
    const unitStart = at - layout.lowByte;
    if (layout.unit === 1) yield at;
    else if (unitStart >= 0 && unitStart % 2 === 0 && unitIs(bytes, unitStart, layout, LF)) yield unitStart;
  }
}

interface BreakCount {
  /** Line breaks (LF code units) in the whole text. */
  breaks: number;
  crlf: number;
  lf: number;
  /** The text's last code unit is an LF (its last line is terminated). */
  endsWithBreak: boolean;
  /** Byte offset where the 0-based line `first` starts, null when the text has fewer lines. */
  start: number | null;
  /** Byte offset just past line `end - 1` (its break), the end of the file when the text has fewer. */
  end: number;
}

/** One pass over the whole text: its line breaks, and the byte range of lines `first` to `end - 1`. */
async function countBreaks(
  file: RegularFile,
  layout: Layout,
  options: StreamOptions,
  first: number,
  end: number,
): Promise<BreakCount> {
  const count: BreakCount = {
    breaks: 0,
    crlf: 0,
    lf: 0,
    endsWithBreak: false,
    start: first === 0 ? layout.start : null,
    end: end === 0 ? layout.start : file.size,
  };
  let previousWasCr = false;
  for (let position = layout.start; position < file.size; ) {
    const bytes = await readAt(file, position, Math.min(options.chunkBytes, file.size - position));
    if (bytes.length === 0) break;
    for (const at of lineFeeds(bytes, layout)) {
      const crBefore = at === 0 ? previousWasCr : unitIs(bytes, at - layout.unit, layout, CR);
      if (crBefore) count.crlf++;
      else count.lf++;
      count.breaks++;
      if (count.breaks === first) count.start = position + at + layout.unit;
      if (count.breaks === end) count.end = position + at + layout.unit;
    }
    const last = bytes.length - layout.unit;
    previousWasCr = last >= 0 && unitIs(bytes, last, layout, CR);
    count.endsWithBreak = last >= 0 && unitIs(bytes, last, layout, LF);
    position += bytes.length;
  }
  return count;
}

/**
 * Byte offset where the last `lines` lines start, read back from the end a chunk at a time (a
 * final line break ends the last line, it does not start another). `layout.start` when the text
 * has no more lines than that.
 */
async function tailStart(
  file: RegularFile,
  layout: Layout,
  lines: number,
  options: StreamOptions,
): Promise<number> {
  if (lines === 0) return file.size;
  let end = file.size;
  let found = 0;
  while (end > layout.start) {
    // Chunks end at `end` and start on a code unit of the text (its length is whole units).
    const from = Math.max(layout.start, end - options.chunkBytes);
    const bytes = await readAt(file, from, end - from);
    const feeds = [...lineFeeds(bytes, layout)];
    for (let index = feeds.length - 1; index >= 0; index--) {
      const at = from + (feeds[index] as number);
      if (at + layout.unit === file.size) continue;
      if (++found === lines) return at + layout.unit;
    }
    end = from;
  }
  return layout.start;
}

/**
 * The lines in the byte range [from, to) (whole lines of the window), decoded, until their UTF-8
 * passes `maxBytes`: the line that passes it is kept (cut short if it is longer than `maxBytes`
 * on its own), so the caller's cut sees the window did not fit. Only these bytes are decoded, so
 * only the window is checked to be text.
 */
async function decodeLines(
  file: RegularFile,
  path: string,
  layout: Layout,
  from: number,
  to: number,
  options: StreamOptions,
): Promise<string[]> {
  const decoder = new TextDecoder(layout.encoding === 'utf-8' ? 'utf-8' : 'utf-16le', {
    fatal: true,
    ignoreBOM: true,
  });
  const lines: string[] = [];
  let used = 0;
  let partial = '';
  const decode = (bytes: Buffer, stream: boolean): string => {
    try {
      return decoder.decode(bytes, { stream });
    } catch {
      throw notText(path, `invalid ${layout.encoding === 'utf-8' ? 'UTF-8' : 'UTF-16'} in the lines read`);
    }
  };
  const line = (text: string): string => {
    if (text.includes('\0')) throw notText(path, 'the lines read contain a NUL character');
    return text;
  };
  for (let position = from; position < to; ) {
    const bytes = await readAt(file, position, Math.min(options.chunkBytes, to - position));
    if (bytes.length === 0) break;
    position += bytes.length;
    partial += decode(layout.encoding === 'utf-16be' ? Buffer.from(bytes).swap16() : bytes, position < to);
    for (let at = partial.indexOf('\n'); at !== -1; at = partial.indexOf('\n')) {
      lines.push(line(partial.slice(0, at + 1)));
      partial = partial.slice(at + 1);
      used += Buffer.byteLength(lines.at(-1) as string, 'utf8');
      if (used > options.maxBytes) return lines;
    }
    if (Buffer.byteLength(partial, 'utf8') > options.maxBytes - used) return [...lines, line(partial)];
  }
  return partial === '' ? lines : [...lines, line(partial)];
}

function notText(path: string, why: string): FsError {
  return new FsError(
    'binary_file',
    `file \`${displayPath(path)}\` is not a text file: ${why} (read it with fs/readFile)`,
  );
}

function lineBreakKind(count: BreakCount): LineBreakKind {
  if (count.crlf > 0 && count.lf > 0) return 'mixed';
  if (count.crlf > 0) return 'crlf';
  return count.lf > 0 ? 'lf' : 'none';
}

/**
 * The window of an opened text file, read in chunks. `bounded` is the caller's cut of the
 * decoded lines to `maxBytes` (readTextFile's `boundedLines`), so both paths cut alike.
 */
export async function streamTextWindow(
  file: RegularFile,
  path: string,
  window: LineWindow,
  options: StreamOptions,
  bounded: (lines: string[]) => { content: string; lineCount: number; truncated: boolean },
): Promise<StreamedText> {
  const layout = await layoutOf(file, path);
  if (layout.unit === 2 && (file.size - layout.start) % 2 !== 0)
    throw notText(path, 'UTF-16 text of an odd number of bytes');
  const tailFrom = window.kind === 'tail' ? await tailStart(file, layout, window.count, options) : null;
  const first = window.kind === 'from' ? window.first : -1;
  const end = window.kind === 'from' ? window.first + window.count : -1;
  const count = await countBreaks(file, layout, options, first, end);
  const totalLines = count.breaks + (file.size > layout.start && !count.endsWithBreak ? 1 : 0);
  const range =
    tailFrom !== null
      ? { first: totalLines - Math.min(window.count, totalLines), start: tailFrom, end: file.size }
      : { first, start: count.start, end: count.end };
  const lines =
    range.start === null || range.start >= range.end
      ? []
      : await decodeLines(file, path, layout, range.start, range.end, options);
  const cut = bounded(lines);
  return {
    content: cut.content,
    startLine: range.first + 1,
    lineCount: cut.lineCount,
    totalLines,
    truncated: cut.truncated,
    encoding: layout.encoding,
    bom: layout.bom,
    lineEnding: lineBreakKind(count),
    sizeBytes: file.size,
  };
}
