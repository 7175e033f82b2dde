import { fsPathArg } from '@fs-sandbox/policy/core';
import { unlink } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam } from '../params.js';
import { stagedParam, withStagedFile } from '../staged-file.js';

/**
 * Removes the staging file of a write handle that will not be closed (its connection closed, one of
 * its blocks failed). Only the very file the handle made is removed; the target is left untouched.
 */
export const discardStagedOperation: Operation<'fs/discardStaged'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os), staged: stagedParam(raw) }),
  async run({ path, staged }, context) {
    await withStagedFile(path, staged, context, async (_file, _target, stagedAccess) => {
      await unlink(fsPathArg(stagedAccess)).catch((error: unknown) => {
        if (!hasErrno(error, 'ENOENT')) throw fromOsError(error, path);
      });
    });
    return { response: {} };
  },
};
