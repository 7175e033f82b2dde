import { decodePathBytes, fsPathArg, nativeToPathUri } from '@fs-sandbox/policy/core';
import { realpathBytes } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { pathParam } from '../params.js';

/** The physical path (every symlink resolved) of an existing file, as the kernel resolves it. */
export async function canonicalPathOf(path: string): Promise<string> {
  try {
    // Bytes, not a string: a name that is not UTF-8 must come back exactly, not as U+FFFD.
    return decodePathBytes(await realpathBytes(fsPathArg(path)));
  } catch (error) {
    throw fromOsError(error, path);
  }
}

export const canonicalizeOperation: Operation<'fs/canonicalize'> = {
  parse: (raw, os) => ({ path: pathParam(raw, 'path', os) }),
  async run({ path }, context) {
    return { response: { path: nativeToPathUri(await canonicalPathOf(path), context.os) } };
  },
};
