import { FsError } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import { fromOsError } from '../src/os-error.js';

function errno(code: string): Error {
  return Object.assign(new Error(`${code}: something, open '/x'`), { code });
}

function mapped(code: string, noFollow = false): FsError {
  const error = fromOsError(errno(code), '/w/f', { noFollow });
  if (!(error instanceof FsError)) throw new Error('not mapped');
  return error;
}

describe('fromOsError', () => {
  it.each([
    ['ENOENT', 'not_found', -32004, 'No such file or directory: /w/f'],
    ['EACCES', 'permission_denied', -32600, 'Permission denied: /w/f'],
    ['EPERM', 'permission_denied', -32600, 'Operation not permitted: /w/f'],
    ['EROFS', 'permission_denied', -32600, 'Permission denied: /w/f is on a read-only file system'],
    ['EISDIR', 'is_directory', -32600, 'Is a directory: /w/f'],
    ['ENOTDIR', 'not_directory', -32600, 'Not a directory: /w/f'],
    ['EEXIST', 'already_exists', -32600, 'File exists: /w/f'],
    ['ENOSPC', 'io_error', -32603, 'No space left on device: /w/f'],
    ['EMFILE', 'io_error', -32603, 'Too many open files in this process: /w/f'],
    ['ENFILE', 'io_error', -32603, 'Too many open files in the system: /w/f'],
    ['EDQUOT', 'io_error', -32603, 'Disk quota exceeded: /w/f'],
    ['EIO', 'io_error', -32603, 'Input/output error: /w/f'],
    ['ELOOP', 'io_error', -32603, 'Too many levels of symbolic links: /w/f'],
    ['EWHATEVER', 'io_error', -32603, 'File system error EWHATEVER: /w/f'],
  ])('%s -> %s', (code, kind, rpc, message) => {
    const error = mapped(code);
    expect([error.kind, error.code, error.message]).toEqual([kind, rpc, message]);
  });

  it('reads ELOOP as a refused symlink when the leaf was opened without following', () => {
    const error = mapped('ELOOP', true);
    expect(error.kind).toBe('symlink_escape');
    expect(error.message).toContain('/w/f');
  });

  it('shows bytes that are not UTF-8 as \\xNN, keeping the message valid JSON for strict parsers', () => {
    const error = fromOsError(errno('ENOENT'), '/w/a\uDCFF') as FsError;
    expect(error.message).toBe('No such file or directory: /w/a\\xFF');
  });

  it('passes FsErrors and non-OS errors through', () => {
    const typed = new FsError('hash_mismatch', 'x');
    expect(fromOsError(typed, '/w')).toBe(typed);
    const plain = new RangeError('bug');
    expect(fromOsError(plain, '/w')).toBe(plain);
  });
});
