import type { HelperParamsOf } from '@fs-sandbox/policy';
import { assertTextWindow, LIMITS, lineBreakKindOf, splitLines } from '@fs-sandbox/policy/core';
import { sha256OfBytes } from '../hash-file.js';
import { openRegularFile, type RegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { optionalCount, pathParam } from '../params.js';
import { sizeText } from '../size-text.js';
import { decodeText, textTooLarge } from '../text-codec.js';
import { type LineWindow, streamTextWindow } from '../text-window-stream.js';
import { readOpenedFile } from './read-file.js';

type TextWindow = HelperParamsOf<'fs/readTextFile'>;

/** The bytes of an opened text file, at most LIMITS.textMaxBytes (file_too_large beyond). */
export async function readTextBytes(file: RegularFile, path: string): Promise<Buffer> {
  try {
    return await readOpenedFile(file, path, LIMITS.textMaxBytes, textTooLarge);
  } catch (error) {
    throw fromOsError(error, path);
  }
}

/** The window the params name: the last `tail` lines, or `count` lines from the 0-based `first`. */
function windowOf(params: TextWindow): LineWindow {
  if (params.tail != null) return { kind: 'tail', count: params.tail };
  if (params.head != null) return { kind: 'from', first: 0, count: params.head };
  return { kind: 'from', first: (params.line ?? 1) - 1, count: params.limit ?? Number.POSITIVE_INFINITY };
}

function namesWindow(params: TextWindow): boolean {
  return params.head != null || params.tail != null || params.line != null || params.limit != null;
}

/** 0-based index of the window's first line and how many lines it spans, in a text of `totalLines`. */
function linesOf(window: LineWindow, totalLines: number): { first: number; count: number } {
  if (window.kind === 'from') return window;
  const count = Math.min(window.count, totalLines);
  return { first: totalLines - count, count };
}

/** Bytes per read of a streamed window: large enough that a 600 MiB log is a few hundred reads. */
const STREAM_CHUNK_BYTES = 1024 * 1024;

/**
 * The window's lines within `maxBytes` of UTF-8: whole lines only, except that a first line longer
 * than `maxBytes` is cut at a character boundary so the reply is never empty for a long line.
 */
function boundedLines(
  lines: string[],
  maxBytes: number,
): { content: string; lineCount: number; truncated: boolean } {
  let used = 0;
  let taken = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line, 'utf8');
    if (used + bytes > maxBytes) break;
    used += bytes;
    taken++;
  }
  if (taken === lines.length) return { content: lines.join(''), lineCount: taken, truncated: false };
  if (taken > 0) return { content: lines.slice(0, taken).join(''), lineCount: taken, truncated: true };
  const cut = prefixWithin(lines[0] ?? '', maxBytes);
  return { content: cut, lineCount: cut === '' ? 0 : 1, truncated: true };
}

/** The longest prefix of `text` (whole code points) whose UTF-8 is at most `maxBytes`. */
function prefixWithin(text: string, maxBytes: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const bytes = Buffer.byteLength(char, 'utf8');
    if (used + bytes > maxBytes) break;
    used += bytes;
    end += char.length;
  }
  return text.slice(0, end);
}

export const readTextFileOperation: Operation<'fs/readTextFile'> = {
  parse: (raw, os) => {
    const params = {
      path: pathParam(raw, 'path', os),
      line: optionalCount(raw, 'line'),
      limit: optionalCount(raw, 'limit'),
      head: optionalCount(raw, 'head'),
      tail: optionalCount(raw, 'tail'),
      maxBytes: optionalCount(raw, 'maxBytes') ?? LIMITS.textMaxBytes,
    };
    assertTextWindow(params);
    return params;
  },
  async run(params, context) {
    const file = await openRegularFile(params.path, { guard: context.guard });
    try {
      const window = windowOf(params);
      if (file.size > LIMITS.textMaxBytes) {
        // Whole-file reads keep the text cap: the caller asked for all of it, and the first 16 MiB
        // labelled truncated would cost a pass over the whole file to answer less than was asked.
        if (!namesWindow(params))
          throw textTooLarge(
            params.path,
            `is ${sizeText(file.size)}: name a window (head, tail, line/limit)`,
          );
        // Too large to decode whole: streamed (text-window-stream.ts), the content still bounded
        // by the text cap whatever maxBytes asks, so the reply stays within the helper's bound.
        const maxBytes = Math.min(params.maxBytes, LIMITS.textMaxBytes);
        const streamed = await streamTextWindow(
          file,
          params.path,
          window,
          { chunkBytes: STREAM_CHUNK_BYTES, maxBytes },
          (lines) => boundedLines(lines, maxBytes),
        );
        return { response: { ...streamed } };
      }
      const bytes = await readTextBytes(file, params.path);
      const decoded = decodeText(bytes, params.path);
      const lines = splitLines(decoded.text);
      const { first, count } = linesOf(window, lines.length);
      const cut = boundedLines(lines.slice(first, first + count), params.maxBytes);
      return {
        response: {
          content: cut.content,
          startLine: first + 1,
          lineCount: cut.lineCount,
          totalLines: lines.length,
          truncated: cut.truncated,
          encoding: decoded.encoding,
          bom: decoded.bom,
          lineEnding: lineBreakKindOf(decoded.text),
          sizeBytes: bytes.length,
          sha256: await sha256OfBytes(bytes),
        },
      };
    } finally {
      await file.handle.close();
    }
  },
};
