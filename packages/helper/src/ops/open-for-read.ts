import type { HelperResultOf } from '@fs-sandbox/policy';
import type { PathGuard } from '@fs-sandbox/policy/core';
import { openRegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { pathParam } from '../params.js';

/**
 * Behind fs/open: checks that `path` is a readable regular file (same checks as fs/readFile, but no
 * size limit: block reads exist for files too large to read whole) and reports its identity, which
 * every later fs/readRange re-checks.
 */
export async function openForReadAt(
  path: string,
  guard: PathGuard | null,
): Promise<HelperResultOf<'fs/openForRead'>> {
  const file = await openRegularFile(path, { guard });
  await file.handle.close();
  return { size: file.size, dev: file.dev.toString(), ino: file.ino.toString() };
}

export const openForReadOperation: Operation<'fs/openForRead'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os) }),
  async run({ path }, context) {
    return { response: { ...(await openForReadAt(path, context.guard)) } };
  },
};
