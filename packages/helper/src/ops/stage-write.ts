import { createStagingFile } from '../atomic-write.js';
import type { Operation } from '../operation.js';
import { pathParam } from '../params.js';
import { withWriteTarget } from '../write-target.js';

/**
 * Behind fs/open `mode: "replace"`: checks now, on the target's physical location, that it may be
 * written (a refused write handle fails at open, not at close), and makes the empty staging file
 * the blocks will go to, beside the target so that publishing it is one rename.
 */
export const stageWriteOperation: Operation<'fs/stageWrite'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os) }),
  async run({ path }, context) {
    const options = { os: context.os, refuseSymlinkLeaf: context.sandboxed, guard: context.guard };
    return withWriteTarget(path, options, async (target) => {
      const staging = await createStagingFile(target, context.os);
      try {
        const stats = await staging.handle.stat();
        const staged = { name: staging.name, dev: stats.dev.toString(), ino: stats.ino.toString() };
        return { response: { staged } };
      } finally {
        await staging.handle.close();
      }
    });
  },
};
