import { expect } from 'vitest';
import { FsError } from '../../src/error-kinds.js';

/** The FsError `fn` throws; anything else thrown, or nothing, fails the test. */
export function thrownFsError(fn: () => unknown): FsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return error as FsError;
  }
  throw new Error('expected a rejection');
}
