import { describe, expect, it } from 'vitest';
import { parseRipgrepEvent, RecordSplitter } from '../../src/ripgrep/rg-stream.js';

const line = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('RecordSplitter', () => {
  it('joins records split across chunks and keeps the rest for the next chunk', () => {
    const splitter = new RecordSplitter(100, 0x0a);
    expect(splitter.push(Buffer.from('{"a":1}\n{"b"'))?.map(String)).toEqual(['{"a":1}']);
    expect(splitter.push(Buffer.from(':2}\n\n'))?.map(String)).toEqual(['{"b":2}', '']);
    expect(splitter.push(Buffer.from('x'))).toEqual([]);
  });

  it('reports a record over the bound instead of buffering it, even when it arrives in pieces', () => {
    const splitter = new RecordSplitter(8, 0x0a);
    expect(splitter.push(Buffer.from('12345'))).toEqual([]);
    expect(splitter.push(Buffer.from('6789'))).toBeNull();
    expect(new RecordSplitter(8, 0x0a).push(Buffer.from('123456789\n'))).toBeNull();
  });

  it('splits on NUL for file lists', () => {
    const splitter = new RecordSplitter(100, 0x00);
    expect(splitter.push(Buffer.from('/w/a\0/w/b\0'))?.map(String)).toEqual(['/w/a', '/w/b']);
  });
});

describe('parseRipgrepEvent', () => {
  it('reads a match with its byte offsets, text or base64 bytes', () => {
    const event = parseRipgrepEvent(
      line({
        type: 'match',
        data: {
          path: { bytes: Buffer.from([0x2f, 0x77, 0x2f, 0xff]).toString('base64') },
          lines: { bytes: Buffer.from([0x66, 0x6f, 0x6f, 0xff, 0x0a]).toString('base64') },
          line_number: 7,
          absolute_offset: 0,
          submatches: [{ match: { text: 'foo' }, start: 0, end: 3 }],
        },
      }),
    );
    expect(event).toEqual({
      type: 'match',
      path: '/w/\udcff',
      lineNumber: 7,
      line: Buffer.from([0x66, 0x6f, 0x6f, 0xff, 0x0a]),
      submatches: [{ start: 0, end: 3 }],
    });
  });

  it('reads context lines, file ends and the summary; ignores begin', () => {
    expect(
      parseRipgrepEvent(
        line({
          type: 'context',
          data: { path: { text: '/w/a' }, lines: { text: 'x\n' }, line_number: 2, submatches: [] },
        }),
      ),
    ).toMatchObject({ type: 'context', path: '/w/a', lineNumber: 2, submatches: [] });
    expect(
      parseRipgrepEvent(
        line({ type: 'end', data: { path: { text: '/w/a' }, stats: { bytes_searched: 12 } } }),
      ),
    ).toEqual({ type: 'end', path: '/w/a', bytesSearched: 12 });
    expect(
      parseRipgrepEvent(line({ type: 'summary', data: { stats: { searches: 3, bytes_searched: 40 } } })),
    ).toEqual({ type: 'summary', searches: 3, bytesSearched: 40 });
    expect(parseRipgrepEvent(line({ type: 'begin', data: { path: { text: '/w/a' } } }))).toBeNull();
  });

  it('refuses output that is not ripgrep JSON with a typed error, never a crash', () => {
    expect(() => parseRipgrepEvent(Buffer.from('not json'))).toThrow(/not JSON/);
    expect(() =>
      parseRipgrepEvent(line({ type: 'match', data: { path: { text: '/a' }, lines: {}, line_number: 1 } })),
    ).toThrow(/neither text nor bytes/);
  });
});
