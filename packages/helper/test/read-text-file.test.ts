import { createHash } from 'node:crypto';
import { statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import { expectKind, fails, fileWith, ok, tempDir, uri } from './support/helper-run.js';

async function read(path: string, window: Record<string, unknown> = {}) {
  return (await ok('fs/readTextFile', { path: uri(path), ...window })).response;
}

const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');

describe('fs/readTextFile', () => {
  it('reads a whole UTF-8 file with its metadata and the sha256 of its bytes', async () => {
    const path = fileWith('héllo\nworld\n');
    expect(await read(path)).toEqual({
      content: 'héllo\nworld\n',
      startLine: 1,
      lineCount: 2,
      totalLines: 2,
      truncated: false,
      encoding: 'utf-8',
      bom: false,
      lineEnding: 'lf',
      sizeBytes: Buffer.byteLength('héllo\nworld\n'),
      sha256: createHash('sha256').update('héllo\nworld\n').digest('hex'),
    });
  });

  it('counts a last line without a line break, and an empty file as no lines', async () => {
    expect(await read(fileWith('a\nb'))).toMatchObject({ totalLines: 2, lineEnding: 'lf' });
    expect(await read(fileWith('one line'))).toMatchObject({ totalLines: 1, lineEnding: 'none' });
    expect(await read(fileWith(''))).toMatchObject({
      content: '',
      totalLines: 0,
      lineCount: 0,
      lineEnding: 'none',
    });
  });

  it('reports CRLF and mixed line endings and keeps them in the content', async () => {
    expect(await read(fileWith('a\r\nb\r\n'))).toMatchObject({ content: 'a\r\nb\r\n', lineEnding: 'crlf' });
    expect(await read(fileWith('a\r\nb\n'))).toMatchObject({ lineEnding: 'mixed', totalLines: 2 });
  });

  it('reports a UTF-8 BOM in `bom`, not in the content; the hash covers the BOM', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('x\n')]);
    const result = await read(fileWith(bytes));
    expect(result).toMatchObject({ content: 'x\n', encoding: 'utf-8', bom: true, sizeBytes: 5 });
    expect(result.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('decodes UTF-16 LE and BE with their BOM', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('ü\r\nz', 'utf16le')]);
    expect(await read(fileWith(le))).toMatchObject({
      content: 'ü\r\nz',
      encoding: 'utf-16le',
      bom: true,
      lineEnding: 'crlf',
      totalLines: 2,
    });
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('ü\nz', 'utf16le').swap16()]);
    expect(await read(fileWith(be))).toMatchObject({ content: 'ü\nz', encoding: 'utf-16be', bom: true });
  });

  it.each([
    ['a NUL byte', Buffer.from('text\0more')],
    ['invalid UTF-8', Buffer.from([0x61, 0xff, 0xfe, 0x0a])],
    ['UTF-16 without a BOM', Buffer.from('ab', 'utf16le')],
    ['UTF-16 of an odd length', Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x62])],
    [
      'a lone UTF-16 surrogate',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from([0x00, 0xd8, 0x61, 0x00])]),
    ],
  ])('refuses %s as binary_file', async (_what, bytes) => {
    const error = await fails('fs/readTextFile', { path: uri(fileWith(bytes)) });
    expectKind(error, 'binary_file', -32600);
    expect(error.message).toMatch(/is not a text file/);
  });

  it('streams a file over the cap: its window, without the sha256; refuses a window that is not text and a whole read', async () => {
    const path = fileWith('');
    const lines = Array.from({ length: 20_000 }, (_, i) => `${i + 1} ${'x'.repeat(1000)}\n`).join('');
    writeFileSync(path, lines);
    expect(statSync(path).size).toBeGreaterThan(LIMITS.textMaxBytes);
    const tail = await read(path, { tail: 2 });
    expect(tail).toMatchObject({ startLine: 19_999, lineCount: 2, totalLines: 20_000, truncated: false });
    expect(tail.content).toBe(`19999 ${'x'.repeat(1000)}\n20000 ${'x'.repeat(1000)}\n`);
    expect(tail.sha256).toBeUndefined();
    const from = await read(path, { line: 2 });
    expect(from.truncated).toBe(true);
    expect(Buffer.byteLength(from.content as string)).toBeLessThanOrEqual(LIMITS.textMaxBytes);
    expect(Buffer.byteLength(from.content as string)).toBeGreaterThan(LIMITS.textMaxBytes - 1010);
    // A read of the whole file keeps the cap: it names no window.
    const whole = await fails('fs/readTextFile', { path: uri(path) });
    expectKind(whole, 'file_too_large', -32600);
    expect(whole.message).toMatch(/name a window .*\(16 MiB\)/);
    const zeros = fileWith('', 'zeros');
    truncateSync(zeros, LIMITS.textMaxBytes + 1);
    expectKind(await fails('fs/readTextFile', { path: uri(zeros), head: 1 }), 'binary_file', -32600);
    // A hang bound, not a timing target: three passes over 20 MiB took 30 s on a loaded machine.
  }, 120_000);

  describe('windows', () => {
    it('line and limit select lines from a 1-based line', async () => {
      expect(await read(fileWith(TEN_LINES), { line: 3, limit: 2 })).toMatchObject({
        content: 'line 3\nline 4\n',
        startLine: 3,
        lineCount: 2,
        totalLines: 10,
        truncated: false,
      });
      expect(await read(fileWith(TEN_LINES), { line: 9 })).toMatchObject({
        content: 'line 9\nline 10\n',
        lineCount: 2,
      });
      expect(await read(fileWith(TEN_LINES), { line: 20 })).toMatchObject({
        content: '',
        lineCount: 0,
        startLine: 20,
      });
    });

    it('head and tail count lines', async () => {
      expect(await read(fileWith(TEN_LINES), { head: 2 })).toMatchObject({
        content: 'line 1\nline 2\n',
        startLine: 1,
      });
      expect(await read(fileWith(TEN_LINES), { tail: 2 })).toMatchObject({
        content: 'line 9\nline 10\n',
        startLine: 9,
        lineCount: 2,
      });
      expect(await read(fileWith('a\nb\n'), { tail: 5 })).toMatchObject({ content: 'a\nb\n', startLine: 1 });
    });

    it('maxBytes cuts at whole lines, or inside a first line longer than it at a character boundary', async () => {
      expect(await read(fileWith(TEN_LINES), { maxBytes: 15 })).toMatchObject({
        content: 'line 1\nline 2\n',
        lineCount: 2,
        truncated: true,
      });
      expect(await read(fileWith('ééé\n'), { maxBytes: 3 })).toMatchObject({
        content: 'é',
        lineCount: 1,
        truncated: true,
      });
    });

    it.each([
      [{ head: 1, tail: 1 }, 'head and tail'],
      [{ line: 2, head: 1 }, 'line/limit and head'],
      [{ limit: 2, tail: 1 }, 'line/limit and tail'],
    ])('refuses mixed windows %j as invalid_params', async (window, named) => {
      const error = await fails('fs/readTextFile', { path: uri(fileWith(TEN_LINES)), ...window });
      expectKind(error, 'invalid_params', -32602);
      expect(error.message).toContain(named);
    });

    it('refuses line 0 as invalid_params', async () => {
      expectKind(
        await fails('fs/readTextFile', { path: uri(fileWith('a')), line: 0 }),
        'invalid_params',
        -32602,
      );
    });
  });

  it('refuses a directory and a missing file with their kinds', async () => {
    const dir = tempDir();
    expectKind(await fails('fs/readTextFile', { path: uri(dir) }), 'is_directory', -32600);
    expectKind(await fails('fs/readTextFile', { path: uri(join(dir, 'nope')) }), 'not_found', -32004);
  });
});
