import { publishStagingFile, sealStagingFile } from '../atomic-write.js';
import { modeForReplacement } from '../file-mode.js';
import type { Operation } from '../operation.js';
import { pathParam } from '../params.js';
import { stagedParam, withStagedFile } from '../staged-file.js';

/**
 * Behind fs/close of a write handle: the staging file takes the target's mode and owner (a new
 * file's mode under the umask), is flushed, and replaces the target in one rename. The target is
 * located and checked by the guard again here: what decides is where it physically is when it is
 * replaced, not where it was at fs/open.
 */
export const publishStagedOperation: Operation<'fs/publishStaged'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os), staged: stagedParam(raw) }),
  async run({ path, staged }, context) {
    await withStagedFile(path, staged, context, async (file, target, stagedAccess) => {
      await sealStagingFile(file, target, { mode: modeForReplacement(target.existing), durable: true });
      await publishStagingFile(stagedAccess, target, { os: context.os, createOnly: false, durable: true });
    });
    return { response: {} };
  },
};
