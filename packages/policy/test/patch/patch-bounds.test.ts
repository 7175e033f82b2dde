import { describe, expect, it } from 'vitest';
import { isFsError } from '../../src/error-kinds.js';
import { LIMITS } from '../../src/limits.js';
import { parseBoundedPatch } from '../../src/patch/patch-bounds.js';
import { parseParams } from '../../src/schemas/method-schemas.js';

function kindOf(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    return isFsError(error) ? error.kind : 'not an FsError';
  }
}

const patchOf = (body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

describe('parseBoundedPatch', () => {
  it('refuses patch text past patchMaxBytes before parsing it (file_too_large)', () => {
    const huge = `*** Begin Patch\n*** Add File: a\n+${'x'.repeat(LIMITS.patchMaxBytes)}\n*** End Patch`;
    expect(kindOf(() => parseBoundedPatch(huge))).toBe('file_too_large');
  });

  it('takes patchMaxFiles files and refuses one more (invalid_params)', () => {
    const files = (count: number) =>
      patchOf(Array.from({ length: count }, (_, i) => `*** Delete File: f${i}`));
    expect(parseBoundedPatch(files(LIMITS.patchMaxFiles))).toHaveLength(LIMITS.patchMaxFiles);
    expect(kindOf(() => parseBoundedPatch(files(LIMITS.patchMaxFiles + 1)))).toBe('invalid_params');
  });

  it('refuses more than patchMaxChunks update chunks across the patch (invalid_params)', () => {
    const chunks = Array.from({ length: LIMITS.patchMaxChunks + 1 }, (_, i) => `@@\n-a${i}\n+b${i}`);
    expect(kindOf(() => parseBoundedPatch(patchOf(['*** Update File: u', ...chunks])))).toBe(
      'invalid_params',
    );
  });

  it('is the method table bound: fs/applyPatch params past it do not parse', () => {
    const files = patchOf(
      Array.from({ length: LIMITS.patchMaxFiles + 1 }, (_, i) => `*** Delete File: f${i}`),
    );
    expect(kindOf(() => parseParams('fs/applyPatch', { patch: files, cwd: 'file:///w' }))).toBe(
      'invalid_params',
    );
  });
});
