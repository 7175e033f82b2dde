import type { PathGuard } from '@fs-sandbox/policy/core';
import { openRegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { pathParam } from '../params.js';

export interface FileIdentity {
  /** Decimal strings: exact 64-bit values (a double would round large inode numbers). */
  dev: string;
  ino: string;
}

export interface OpenForReadResult extends FileIdentity {
  size: number;
}

/**
 * Behind fs/open: checks that `path` is a readable regular file (same checks as fs/readFile, but no
 * size limit: block reads exist for files too large to read whole) and reports its identity, which
 * every later fs/readRange re-checks.
 */
export async function openForReadAt(path: string, guard: PathGuard | null): Promise<OpenForReadResult> {
  const file = await openRegularFile(path, { guard });
  await file.handle.close();
  return { size: file.size, dev: file.dev.toString(), ino: file.ino.toString() };
}

export const openForReadOperation: Operation = {
  async run(params, context) {
    const path = pathParam(params, 'path', context.os);
    return { response: { ...(await openForReadAt(path, context.guard)) } };
  },
};
