import { RPC_CODES } from '@fs-sandbox/policy';
import { describe, expect, it, vi } from 'vitest';
import { describeError } from '../src/cli/json-output.js';
import { MethodNotFoundError, toRpcError } from '../src/server/wire-errors.js';

/** An FsError from a separately evaluated policy package, as the helper bundle or the CLI bundle has. */
async function foreignFsError(): Promise<Error> {
  vi.resetModules();
  const copy = await import('@fs-sandbox/policy/core');
  return new copy.FsError('file_too_large', 'too big: /w/big.bin', { limitBytes: 10 });
}

describe('toRpcError', () => {
  it('keeps the kind of an FsError from another copy of the policy package', async () => {
    const foreign = await foreignFsError();
    expect(toRpcError(foreign)).toEqual({
      code: RPC_CODES.invalidRequest,
      message: 'too big: /w/big.bin',
      data: { limitBytes: 10, errorKind: 'file_too_large' },
    });
  });

  it('gives an unknown method its own JSON-RPC code', () => {
    expect(toRpcError(new MethodNotFoundError('fs/nope'))).toEqual({
      code: RPC_CODES.methodNotFound,
      message: 'fs-sandbox does not implement `fs/nope`',
      data: { errorKind: 'invalid_request' },
    });
  });

  it('calls a plain error with FsError-shaped fields internal', () => {
    const lookalike = Object.assign(new Error('boom'), { kind: 'not_found' });
    expect(toRpcError(lookalike)).toMatchObject({
      code: RPC_CODES.internalError,
      message: 'internal error: boom',
      data: { errorKind: 'internal_error' },
    });
  });
});

describe('the CLI error line', () => {
  it('names the kind of an FsError from another copy of the policy package', async () => {
    expect(describeError(await foreignFsError())).toBe('fs-sandbox: too big: /w/big.bin [file_too_large]');
  });

  it('marks anything else as internal', () => {
    expect(describeError(new RangeError('bad length'))).toBe(
      'fs-sandbox: internal error: bad length [internal_error]',
    );
  });
});
