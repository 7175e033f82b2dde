import { describe, expect, it } from 'vitest';
import { isFsError } from '../../src/error-kinds.js';
import { applyChunks } from '../../src/patch/apply-chunks.js';
import { type PatchHunk, parsePatch } from '../../src/patch/parse-patch.js';

/** The chunks of a one-file update patch written as its body lines. */
function chunksOf(...body: string[]) {
  const [hunk] = parsePatch(['*** Begin Patch', '*** Update File: f', ...body, '*** End Patch'].join('\n'));
  return (hunk as Extract<PatchHunk, { kind: 'update' }>).chunks;
}

describe('applyChunks', () => {
  it('keeps a context line as the file has it, even when it matched only loosely', () => {
    expect(applyChunks('a\r\nb  \nc\r\n', chunksOf('@@', ' b', '-c', '+C'), 'f')).toBe('a\r\nb  \nC\r\n');
  });

  it('gives inserted lines the break of the first line, and leaves the other lines theirs', () => {
    expect(applyChunks('a\nb\r\nc\r\n', chunksOf('@@', '-c', '+C', '+D'), 'f')).toBe('a\nb\r\nC\nD\n');
    expect(applyChunks('a\r\nb\nc\n', chunksOf('@@', '-b', '+B'), 'f')).toBe('a\r\nB\r\nc\n');
  });

  it('ends the result with a newline in the file’s break', () => {
    expect(applyChunks('a\r\nb', chunksOf('@@', '-a', '+A'), 'f')).toBe('A\r\nb\r\n');
  });

  it('reads a byte order mark as part of the first line: trimming does not remove it', () => {
    expect(applyChunks('\uFEFFone\ntwo\n', chunksOf('@@', '-two', '+TWO'), 'f')).toBe('\uFEFFone\nTWO\n');
    let kind: string | null = null;
    try {
      applyChunks('\uFEFFone\ntwo\n', chunksOf('@@', '-one', '+ONE'), 'f');
    } catch (error) {
      kind = isFsError(error) ? error.kind : null;
    }
    expect(kind).toBe('patch_conflict');
  });

  it('still matches surrounding Unicode white space loosely, as the reference trims it', () => {
    expect(applyChunks('\u3000x\u00A0\n', chunksOf('@@', '-x', '+y'), 'f')).toBe('y\n');
  });
});
