import { describe, expect, it } from 'vitest';
import { decodeStrictBase64 } from '../src/base64.js';
import type { FsError } from '../src/error-kinds.js';
import { thrownFsError } from './support/thrown.js';

function failure(text: string): FsError {
  return thrownFsError(() => decodeStrictBase64(text, 'fs/writeFile', 'dataBase64'));
}

describe('decodeStrictBase64', () => {
  it('decodes canonical base64', () => {
    expect(decodeStrictBase64('aGVsbG8gc2FuZGJveAo=', 'fs/writeFile', 'dataBase64').toString()).toBe(
      'hello sandbox\n',
    );
    expect(decodeStrictBase64('', 'fs/writeFile', 'dataBase64').length).toBe(0);
    expect(decodeStrictBase64('aGk=', 'm', 'f').toString()).toBe('hi');
  });
  it('reports an invalid symbol like the reference', () => {
    const e = failure('%%%not-base64');
    expect(e.kind).toBe('invalid_request');
    expect(e.code).toBe(-32600);
    expect(e.message).toBe('fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.');
  });
  it('refuses padding in the middle', () => {
    expect(failure('ab=c').message).toMatch(/Invalid symbol 61, offset 2\.$/);
  });
  it('refuses missing padding', () => {
    expect(failure('aGk').message).toMatch(/Invalid padding$/);
  });
  it('refuses an impossible length', () => {
    expect(failure('aGVsb').message).toMatch(/Invalid input length: 5$/);
  });
  it('refuses non-zero unused bits (a second spelling of the same bytes)', () => {
    expect(failure('aGl=').message).toMatch(/Invalid last symbol 108, offset 2\.$/);
  });
  it('refuses whitespace that Node would skip', () => {
    expect(failure('aGk=\n').message).toMatch(/Invalid symbol 61, offset 3\.$/);
    expect(failure('aG k').message).toMatch(/Invalid symbol 32, offset 2\.$/);
  });
  it('lets the caller choose the kind (writeBlock chunks are invalid params)', () => {
    expect(() => decodeStrictBase64('%', 'fs/writeBlock', 'chunk', 'invalid_params')).toThrow(
      expect.objectContaining({ kind: 'invalid_params' }),
    );
  });
});
