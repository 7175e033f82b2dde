import { describe, expect, it } from 'vitest';
import { parseProgressLine, progressLine } from '../src/tree-progress.js';

describe('tree progress lines', () => {
  it('round-trips every phase', () => {
    for (const phase of ['checked', 'total', 'done'] as const) {
      const line = progressLine({ phase, entries: 12_345 });
      expect(line.endsWith('\n')).toBe(true);
      expect(parseProgressLine(line.slice(0, -1))).toEqual({ phase, entries: 12_345 });
    }
  });

  it('takes nothing else for progress', () => {
    for (const line of [
      'fs-sandbox:progress done',
      'fs-sandbox:progress done -1',
      'fs-sandbox:progress removed 3',
      'fs-sandbox:progress done 3 extra',
      ' fs-sandbox:progress done 3',
      'fs-sandbox helper: protocol failure: x',
      'fs-sandbox:progress done 1234567890123456',
    ]) {
      expect(parseProgressLine(line), line).toBeNull();
    }
  });
});
