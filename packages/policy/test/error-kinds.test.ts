import { describe, expect, it, vi } from 'vitest';
import { FsError, isFsError, RPC_CODES, toWireError } from '../src/error-kinds.js';

/** A freshly evaluated copy of the module, as the helper bundle or a second installed version has. */
async function otherCopy(): Promise<typeof import('../src/error-kinds.js')> {
  vi.resetModules();
  return import('../src/error-kinds.js');
}

/** What another copy's constructor leaves on an instance, built without any copy of the class. */
function simulatedOtherCopyError(kind: string, message: string, extra?: Record<string, unknown>): Error {
  const error = Object.assign(new Error(message), { name: 'FsError', kind, code: -1, extra });
  Object.defineProperty(error, Symbol.for('fs-sandbox.FsError'), { value: true });
  return error;
}

describe('isFsError', () => {
  it('recognises an FsError built by a separately evaluated copy of the module', async () => {
    const copy = await otherCopy();
    expect(copy.FsError).not.toBe(FsError);
    const foreign = new copy.FsError('not_found', 'No such file or directory: /w/x', { path: '/w/x' });
    expect(foreign instanceof FsError).toBe(false);
    expect(isFsError(foreign)).toBe(true);
    expect(copy.isFsError(new FsError('timeout', 'too slow'))).toBe(true);
  });

  it('recognises the brand a copy it cannot import would set', () => {
    expect(isFsError(simulatedOtherCopyError('hash_mismatch', 'changed'))).toBe(true);
  });

  it('does not take a plain error with FsError-shaped fields for one', () => {
    const lookalike = Object.assign(new Error('boom'), { name: 'FsError', kind: 'not_found', code: -32004 });
    expect(isFsError(lookalike)).toBe(false);
    expect(toWireError(lookalike).data.errorKind).toBe('internal_error');
  });

  it('does not let the brand travel with copied fields', () => {
    const error = new FsError('not_found', 'gone');
    expect(Object.getOwnPropertyDescriptor(error, Symbol.for('fs-sandbox.FsError'))?.enumerable).toBe(false);
    expect(isFsError({ ...error })).toBe(false);
    expect(isFsError(JSON.parse(JSON.stringify(error)))).toBe(false);
  });

  it('refuses a branded error whose kind this copy does not know, or whose fields are malformed', () => {
    expect(isFsError(simulatedOtherCopyError('some_future_kind', 'new'))).toBe(false);
    const badExtra = simulatedOtherCopyError('not_found', 'x');
    Object.assign(badExtra, { extra: 'not an object' });
    expect(isFsError(badExtra)).toBe(false);
    for (const value of [null, undefined, 'not_found', 42, Symbol.for('fs-sandbox.FsError')]) {
      expect(isFsError(value)).toBe(false);
    }
  });
});

describe('toWireError', () => {
  it('maps an FsError from another copy by its kind, with its message and extra data', async () => {
    const copy = await otherCopy();
    const wire = toWireError(new copy.FsError('not_found', 'No such file', { path: '/w/x' }));
    expect(wire).toEqual({
      code: RPC_CODES.notFound,
      message: 'No such file',
      data: { path: '/w/x', errorKind: 'not_found' },
    });
  });

  it('takes the code from the kind, not from whatever code the error carries', () => {
    expect(toWireError(simulatedOtherCopyError('invalid_params', 'bad')).code).toBe(RPC_CODES.invalidParams);
  });

  it('never lets extra data replace the kind', () => {
    const wire = toWireError(new FsError('timeout', 'slow', { errorKind: 'not_found' }));
    expect(wire.data.errorKind).toBe('timeout');
  });

  it('turns anything else into internal_error with its message', () => {
    expect(toWireError(new TypeError('x is undefined'))).toEqual({
      code: RPC_CODES.internalError,
      message: 'internal error: x is undefined',
      data: { errorKind: 'internal_error' },
    });
    expect(toWireError('thrown string').message).toBe('internal error: thrown string');
    expect(toWireError(undefined).data.errorKind).toBe('internal_error');
  });
});
