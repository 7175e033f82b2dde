import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openRegularFile } from '../src/open-regular-file.js';
import { encodeText } from '../src/text-codec.js';
import { type LineWindow, streamTextWindow } from '../src/text-window-stream.js';
import { ok, tempDir, uri } from './support/helper-run.js';

/**
 * The streamed window (for files over the text cap) against the whole-file read on the same
 * bytes: for any text, encoding, window, byte bound and chunk size, every field but `sha256` is
 * the same. Small chunks put chunk edges everywhere: inside a CRLF, a UTF-8 sequence, a UTF-16
 * pair, at a line's end.
 */

let files = 0;

/** The window's lines as readTextFile cuts them (whole lines within maxBytes, a long first line cut). */
function boundedLines(lines: string[], maxBytes: number) {
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
  let cut = '';
  for (const char of lines[0] ?? '') {
    if (Buffer.byteLength(cut + char, 'utf8') > maxBytes) break;
    cut += char;
  }
  return { content: cut, lineCount: cut === '' ? 0 : 1, truncated: true };
}

async function streamed(path: string, window: LineWindow, maxBytes: number, chunkBytes: number) {
  const file = await openRegularFile(path, {});
  try {
    return await streamTextWindow(file, path, window, { chunkBytes, maxBytes }, (lines) =>
      boundedLines(lines, maxBytes),
    );
  } finally {
    await file.handle.close();
  }
}

const paramsOf = (window: LineWindow): Record<string, number> =>
  window.kind === 'tail'
    ? { tail: window.count }
    : Number.isFinite(window.count)
      ? { line: window.first + 1, limit: window.count }
      : { line: window.first + 1 };

const lineText = fc.stringMatching(/^[a-zé€😀\r ]{0,12}$/u);
const text = fc
  .array(fc.tuple(lineText, fc.constantFrom('\n', '\r\n', '')), { maxLength: 12 })
  .map((lines) => lines.map(([body, end]) => body + end).join(''));
const window: fc.Arbitrary<LineWindow> = fc.oneof(
  fc.record({ kind: fc.constant('tail' as const), count: fc.nat(14) }),
  fc.record({
    kind: fc.constant('from' as const),
    first: fc.nat(14),
    count: fc.oneof(fc.nat(14), fc.constant(Number.POSITIVE_INFINITY)),
  }),
);

describe('streamed fs/readTextFile windows', () => {
  it('answer exactly what the whole-file read answers, but for the sha256', async () => {
    const dir = tempDir();
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.constantFrom('utf-8', 'utf-16le', 'utf-16be'),
        fc.boolean(),
        window,
        fc.integer({ min: 1, max: 60 }),
        fc.constantFrom(2, 4, 6, 16, 1024),
        async (content, encoding, bom, window, maxBytes, chunkBytes) => {
          const path = join(dir, `t${files++}.txt`);
          writeFileSync(path, encodeText(content, encoding, encoding !== 'utf-8' || bom));
          const { sha256, ...whole } = (
            await ok('fs/readTextFile', { path: uri(path), maxBytes, ...paramsOf(window) })
          ).response;
          expect(sha256).toMatch(/^[0-9a-f]{64}$/);
          expect(await streamed(path, window, maxBytes, chunkBytes)).toEqual(whole);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reads the tail of a file without a line break in bounded steps, cut at maxBytes', async () => {
    const path = join(tempDir(), 'one-line.txt');
    writeFileSync(path, 'é'.repeat(50_000));
    const result = await streamed(path, { kind: 'tail', count: 3 }, 101, 64);
    expect(result).toMatchObject({
      content: 'é'.repeat(50),
      startLine: 1,
      lineCount: 1,
      totalLines: 1,
      truncated: true,
    });
  });
});
