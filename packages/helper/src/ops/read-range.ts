import type { HelperParamsOf } from '@fs-sandbox/policy';
import { assertReadBlockLength, FsError, type PathGuard } from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import { openRegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { optionalObject, pathParam, requiredCount } from '../params.js';

type FileIdentity = NonNullable<HelperParamsOf<'fs/readRange'>['identity']>;

interface ReadRangeResult {
  chunk: Buffer;
  /** True only on a short read, as in the reference: a read ending exactly at the end says false. */
  eof: boolean;
}

const DECIMAL = /^\d{1,20}$/;

/** Behind fs/readBlock: one positional read of at most `len` bytes from the file opened earlier. */
export async function readRangeAt(
  path: string,
  offset: number,
  len: number,
  identity: FileIdentity | null | undefined,
  guard: PathGuard | null,
): Promise<ReadRangeResult> {
  const file = await openRegularFile(path, { guard });
  try {
    // The broker's handle names a file, not a path: if the path now leads to another file, the
    // handle's file is gone as far as this reader can tell.
    if (
      identity !== undefined &&
      identity !== null &&
      (file.dev.toString() !== identity.dev || file.ino.toString() !== identity.ino)
    ) {
      throw new FsError('not_found', `file changed since it was opened: ${displayPath(path)}`);
    }
    const chunk = Buffer.allocUnsafe(len);
    let filled = 0;
    while (filled < len) {
      const { bytesRead } = await file.handle.read(chunk, filled, len - filled, offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { chunk: chunk.subarray(0, filled), eof: filled < len };
  } catch (error) {
    throw fromOsError(error, path);
  } finally {
    await file.handle.close();
  }
}

function identityParam(params: Record<string, unknown>): FileIdentity | undefined {
  const raw = optionalObject(params, 'identity');
  if (raw === undefined) return undefined;
  const { dev, ino } = raw;
  if (typeof dev !== 'string' || typeof ino !== 'string' || !DECIMAL.test(dev) || !DECIMAL.test(ino)) {
    throw new FsError(
      'invalid_params',
      'invalid value for `identity`: expected {dev, ino} as decimal strings',
    );
  }
  return { dev, ino };
}

export const readRangeOperation: Operation<'fs/readRange'> = {
  parse(raw, os) {
    const len = requiredCount(raw, 'len');
    assertReadBlockLength(len);
    return {
      path: pathParam(raw, 'path', os),
      offset: requiredCount(raw, 'offset'),
      len,
      identity: identityParam(raw),
    };
  },
  async run({ path, offset, len, identity }, context) {
    const { chunk, eof } = await readRangeAt(path, offset, len, identity, context.guard);
    return { response: { chunk: '', eof }, binary: { field: 'chunk', data: chunk } };
  },
};
