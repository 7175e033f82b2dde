import { LIMITS } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import type { LineEvent } from '../../src/ripgrep/rg-stream.js';
import { SearchCollector } from '../../src/ripgrep/search-collector.js';

const OPTIONS = { maxResults: 100, contextLines: 0, filesOnly: false };

function lineEvent(
  path: string,
  lineNumber: number,
  text: string | Buffer,
  match?: [number, number],
): LineEvent {
  return {
    type: match === undefined ? 'context' : 'match',
    path,
    lineNumber,
    line: typeof text === 'string' ? Buffer.from(`${text}\n`) : text,
    submatches: match === undefined ? [] : [{ start: match[0], end: match[1] }],
  };
}

const end = (path: string) => ({ type: 'end', path, bytesSearched: 10 }) as const;

describe('SearchCollector', () => {
  it('orders matches by path bytes then line, whatever order the threads finished files in', () => {
    const collector = new SearchCollector(OPTIONS, 'linux');
    for (const event of [
      lineEvent('/w/b', 3, 'x', [0, 1]),
      end('/w/b'),
      lineEvent('/w/a', 9, 'x', [0, 1]),
      lineEvent('/w/a', 2, 'x', [0, 1]),
      end('/w/a'),
    ])
      expect(collector.add(event)).toBe(true);
    const result = collector.finish(5);
    expect(result.matches.map((m) => [m.path, m.lineNumber])).toEqual([
      ['file:///w/a', 2],
      ['file:///w/a', 9],
      ['file:///w/b', 3],
    ]);
    expect(result).toMatchObject({
      truncated: false,
      stats: { filesSearched: 2, bytesSearched: 20, elapsedMs: 5 },
    });
  });

  it('gives each match its neighbouring lines, matches included, within contextLines', () => {
    const collector = new SearchCollector({ ...OPTIONS, contextLines: 1 }, 'linux');
    for (const event of [
      lineEvent('/w/a', 1, 'one'),
      lineEvent('/w/a', 2, 'two', [0, 3]),
      lineEvent('/w/a', 3, 'three', [0, 5]),
      lineEvent('/w/a', 4, 'four'),
      end('/w/a'),
    ])
      collector.add(event);
    const [first, second] = collector.finish(0).matches;
    expect(first?.before).toEqual([{ lineNumber: 1, line: 'one' }]);
    expect(first?.after).toEqual([{ lineNumber: 3, line: 'three' }]);
    expect(second?.before).toEqual([{ lineNumber: 2, line: 'two' }]);
    expect(second?.after).toEqual([{ lineNumber: 4, line: 'four' }]);
  });

  it('cuts long lines at the character limit, clipping submatch offsets to what is shown', () => {
    const long = `${'é'.repeat(600)}needle`;
    const collector = new SearchCollector(OPTIONS, 'linux');
    const start = Buffer.byteLength('é'.repeat(600));
    collector.add(lineEvent('/w/a', 1, long, [start, start + 6]));
    collector.add(lineEvent('/w/a', 2, 'aé needle', [4, 10]));
    const [cut, short] = collector.finish(0).matches;
    expect(cut?.line).toHaveLength(LIMITS.searchMaxLineChars);
    expect(cut?.lineTruncated).toBe(true);
    expect(cut?.submatches).toEqual([{ start: 500, end: 500 }]);
    // Byte offsets 4..10 of "aé needle" are characters 3..9.
    expect(short?.submatches).toEqual([{ start: 3, end: 9 }]);
    expect(short?.line.slice(3, 9)).toBe('needle');
  });

  it('keeps a line that is not UTF-8 byte-exact in %XX form, offsets counted in that form', () => {
    const collector = new SearchCollector(OPTIONS, 'linux');
    collector.add(lineEvent('/w/\udcff', 1, Buffer.from([0x25, 0xff, 0x6e, 0x65, 0x0d, 0x0a]), [2, 4]));
    const [match] = collector.finish(0).matches;
    expect(match).toMatchObject({ path: 'file:///w/%FF', line: '%25%FFne', nonUtf8Line: true });
    expect(match?.submatches).toEqual([{ start: 6, end: 8 }]);
  });

  it('stops at maxResults, keeping what it counted, and says truncated', () => {
    const collector = new SearchCollector({ ...OPTIONS, maxResults: 2 }, 'linux');
    expect(collector.add(lineEvent('/w/a', 1, 'x', [0, 1]))).toBe(true);
    expect(collector.add(lineEvent('/w/a', 2, 'x', [0, 1]))).toBe(true);
    expect(collector.add(lineEvent('/w/a', 3, 'x', [0, 1]))).toBe(false);
    const result = collector.finish(0);
    expect(result.matches.map((m) => m.lineNumber)).toEqual([1, 2]);
    expect(result.truncated).toBe(true);
  });

  it('stops before the reply passes its byte bound', () => {
    const collector = new SearchCollector({ ...OPTIONS, maxResults: 10_000 }, 'linux');
    const text = 'x'.repeat(400);
    let accepted = 0;
    for (let file = 0; file < 20_000; file++) {
      if (!collector.add(lineEvent(`/w/${file}`, 1, text, [0, 1]))) break;
      accepted += 1;
    }
    const result = collector.finish(0);
    expect(accepted).toBeLessThan(20_000);
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(
      LIMITS.searchMaxResponseBytes + 1024,
    );
  });

  it('lists files only, sorted, with filesOnly', () => {
    const collector = new SearchCollector({ ...OPTIONS, filesOnly: true }, 'linux');
    collector.add(lineEvent('/w/z', 1, 'x', [0, 1]));
    collector.add(end('/w/z'));
    collector.add(lineEvent('/w/m', 4, 'x', [0, 1]));
    collector.add({ type: 'summary', searches: 9, bytesSearched: 99 });
    const result = collector.finish(0);
    expect(result).toMatchObject({ matches: [], files: ['file:///w/m', 'file:///w/z'] });
    expect(result.stats).toMatchObject({ filesSearched: 9, bytesSearched: 99 });
  });
});
