import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';
import {
  blockText,
  bytes,
  count,
  duration,
  GENERATED_BLOCKS,
  LIMIT_ROWS,
  limitKeysRead,
} from './docs-tables.js';

/**
 * The tables the docs generate from the code are the code's: each page holds exactly the rendered
 * block between its markers. Run with UPDATE_DOCS=1 to rewrite the blocks after a reviewed change.
 */
describe('generated doc tables', () => {
  it.each(GENERATED_BLOCKS.map((block) => [`${block.file}: ${block.name}`, block] as const))(
    '%s is what the code says',
    (_, block) => {
      const file = join(REPO, block.file);
      const page = readFileSync(file, 'utf8');
      const expected = blockText(block);
      const begin = expected.slice(0, expected.indexOf('\n'));
      const end = `<!-- end of ${block.name} -->`;
      const start = page.indexOf(begin);
      const stop = page.indexOf(end);
      if (process.env.UPDATE_DOCS === '1' && start !== -1 && stop !== -1) {
        writeFileSync(file, `${page.slice(0, start)}${expected}${page.slice(stop + end.length)}`);
        return;
      }
      expect(start, `${block.file} has no "${begin}" marker`).toBeGreaterThan(-1);
      expect(page.slice(start, stop + end.length)).toBe(expected);
    },
  );

  it('has a limits row reading every limit of LIMITS', () => {
    const read = new Set(LIMIT_ROWS.flatMap(([, render]) => [...limitKeysRead(render)]));
    expect(Object.keys(LIMITS).filter((key) => !read.has(key))).toEqual([]);
  });

  it('writes sizes, counts and durations as the docs do', () => {
    expect([bytes(512 * 1024 * 1024), bytes(4096), bytes(1_048_576 + 1), bytes(16 * 1024 ** 3)]).toEqual([
      '512 MiB',
      '4 KiB',
      '1 048 577 bytes',
      '16 GiB',
    ]);
    expect([count(50_000), count(999), count(1_000_000)]).toEqual(['50 000', '999', '1 000 000']);
    expect([
      duration(60_000),
      duration(50_000),
      duration(30_000),
      duration(86_400_000),
      duration(1500),
    ]).toEqual(['60 s', '50 s', '30 s', '24 h', '1 500 ms']);
  });
});
