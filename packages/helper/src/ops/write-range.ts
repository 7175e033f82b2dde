import { assertWriteBlock } from '@fs-sandbox/policy/core';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { pathParam, requiredBytes, requiredCount } from '../params.js';
import { stagedParam, withStagedFile } from '../staged-file.js';

/**
 * Behind fs/writeBlock: writes one block at its offset into the write handle's staging file. The
 * file itself stays as it was until the handle is closed; a block past the current end leaves a
 * hole, as pwrite(2) does.
 */
export const writeRangeOperation: Operation<'fs/writeRange'> = {
  parse(raw, os) {
    const offset = requiredCount(raw, 'offset');
    const chunk = requiredBytes(raw, 'chunk');
    assertWriteBlock(offset, chunk.byteLength);
    return { path: pathParam(raw, 'path', os), staged: stagedParam(raw), offset, chunk };
  },
  async run({ path, staged, offset, chunk }, context) {
    await withStagedFile(path, staged, context, async (file) => {
      await file.writeAllAt(chunk, offset).catch((error: unknown) => {
        throw fromOsError(error, path);
      });
    });
    return { response: {} };
  },
};
