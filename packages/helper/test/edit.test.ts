import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import {
  expectKind,
  fails,
  fileWith,
  isPosix,
  ok,
  RESTRICTED_SANDBOX,
  symlinkAt,
  tempDir,
  tempLeftovers,
  uri,
  writableGuard,
} from './support/helper-run.js';

function sha256(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

type Edit = { oldText: string; newText: string; replaceAll?: boolean };

async function edit(path: string, edits: Edit[], extra: Record<string, unknown> = {}) {
  return (await ok('fs/edit', { path: uri(path), edits, ...extra })).response;
}

function editFails(path: string, edits: Edit[], extra: Record<string, unknown> = {}) {
  return fails('fs/edit', { path: uri(path), edits, ...extra });
}

describe('fs/edit', () => {
  it('replaces one occurrence and returns both hashes, the count and a unified diff', async () => {
    const path = fileWith('alpha\nbeta\ngamma\n');
    const result = await edit(path, [{ oldText: 'beta', newText: 'BETA' }]);
    expect(readFileSync(path, 'utf8')).toBe('alpha\nBETA\ngamma\n');
    expect(result).toEqual({
      sha256Before: sha256('alpha\nbeta\ngamma\n'),
      sha256After: sha256('alpha\nBETA\ngamma\n'),
      replacements: 1,
      diff: `--- ${path}\n+++ ${path}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n`,
    });
    expect(tempLeftovers(join(path, '..'))).toEqual([]);
  });

  it('applies edits in order to the running text, replaceAll counting every occurrence', async () => {
    const path = fileWith('a a a\nb\n');
    const result = await edit(path, [
      { oldText: 'a', newText: 'c', replaceAll: true },
      { oldText: 'c c c', newText: 'done' },
    ]);
    expect(readFileSync(path, 'utf8')).toBe('done\nb\n');
    expect(result.replacements).toBe(4);
  });

  it('writes newText literally ($& is not a pattern)', async () => {
    const path = fileWith('x\n');
    await edit(path, [{ oldText: 'x', newText: '$&$1' }]);
    expect(readFileSync(path, 'utf8')).toBe('$&$1\n');
  });

  it('text_not_found names the edit and the closest line, and writes nothing of the earlier edits', async () => {
    const path = fileWith('one\n  function foo() {\nthree\n');
    const error = await editFails(path, [
      { oldText: 'one', newText: 'ONE' },
      { oldText: 'function  foo() {', newText: 'x' },
    ]);
    expectKind(error, 'text_not_found', -32600);
    expect(error.data).toMatchObject({ editIndex: 1, closestLine: 2 });
    expect(error.message).toContain('closest line is 2');
    expect(readFileSync(path, 'utf8')).toBe('one\n  function foo() {\nthree\n');
  });

  it('ambiguous_text_match gives the count and the line numbers', async () => {
    const path = fileWith('x\ny\nx\nz\nx\n');
    const error = await editFails(path, [{ oldText: 'x', newText: 'w' }]);
    expectKind(error, 'ambiguous_text_match', -32600);
    expect(error.data).toMatchObject({ editIndex: 0, count: 3, lines: [1, 3, 5] });
    expect(readFileSync(path, 'utf8')).toBe('x\ny\nx\nz\nx\n');
  });

  it('no_change when the edits leave the text as it was', async () => {
    const path = fileWith('same\n');
    expectKind(await editFails(path, [{ oldText: 'same', newText: 'same' }]), 'no_change', -32600);
  });

  it('hash_mismatch when expectedSha256 is not the current content; the right hash edits', async () => {
    const path = fileWith('v1\n');
    const error = await editFails(path, [{ oldText: 'v1', newText: 'v2' }], {
      expectedSha256: sha256('v0\n'),
    });
    expectKind(error, 'hash_mismatch', -32600);
    expect(readFileSync(path, 'utf8')).toBe('v1\n');
    await edit(path, [{ oldText: 'v1', newText: 'v2' }], { expectedSha256: sha256('v1\n').toUpperCase() });
    expect(readFileSync(path, 'utf8')).toBe('v2\n');
  });

  it('dryRun returns the result and the diff and writes nothing', async () => {
    const path = fileWith('keep\n');
    const before = statSync(path, { bigint: true });
    const result = await edit(path, [{ oldText: 'keep', newText: 'change' }], { dryRun: true });
    expect(result.sha256After).toBe(sha256('change\n'));
    expect(result.diff).toContain('-keep\n+change\n');
    expect(readFileSync(path, 'utf8')).toBe('keep\n');
    expect(statSync(path, { bigint: true }).ino).toBe(before.ino);
  });

  it('matches a CRLF file with LF texts and writes CRLF back', async () => {
    const path = fileWith('a\r\nb\r\nc\r\n');
    const result = await edit(path, [{ oldText: 'a\nb', newText: 'A\nB\nB2' }]);
    expect(readFileSync(path, 'latin1')).toBe('A\r\nB\r\nB2\r\nc\r\n');
    expect(result.diff).not.toContain('\r');
    expect(result.sha256After).toBe(sha256('A\r\nB\r\nB2\r\nc\r\n'));
  });

  it('keeps a UTF-8 BOM and a UTF-16 BE encoding', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const utf8 = fileWith(Buffer.concat([bom, Buffer.from('é\n')]));
    await edit(utf8, [{ oldText: 'é', newText: 'è' }]);
    expect(readFileSync(utf8)).toEqual(Buffer.concat([bom, Buffer.from('è\n')]));
    const be = (text: string) =>
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    const utf16 = fileWith(be('one two\n'));
    await edit(utf16, [{ oldText: 'two', newText: '2' }]);
    expect(readFileSync(utf16)).toEqual(be('one 2\n'));
  });

  it.skipIf(!isPosix)('keeps the file mode (POSIX only)', async () => {
    const path = fileWith('#!/bin/sh\necho a\n');
    chmodSync(path, 0o750);
    await edit(path, [{ oldText: 'echo a', newText: 'echo b' }]);
    expect(statSync(path).mode & 0o7777).toBe(0o750);
  });

  it('refuses a binary file and a missing file', async () => {
    expectKind(
      await editFails(fileWith(Buffer.from('a\0b')), [{ oldText: 'a', newText: 'b' }]),
      'binary_file',
      -32600,
    );
    const missing = join(tempDir(), 'nope');
    expectKind(await editFails(missing, [{ oldText: 'a', newText: 'b' }]), 'not_found', -32004);
  });

  it.each([
    ['an empty oldText', [{ oldText: '', newText: 'x' }]],
    ['no edits', []],
    [
      'too many edits',
      Array.from({ length: LIMITS.editMaxEdits + 1 }, () => ({ oldText: 'a', newText: 'b' })),
    ],
    ['an oldText over the size limit', [{ oldText: 'a'.repeat(LIMITS.editMaxTextBytes + 1), newText: '' }]],
  ])('refuses %s as invalid_params before touching the file', async (_what, edits) => {
    const path = fileWith('a\n');
    expectKind(await editFails(path, edits), 'invalid_params', -32602);
    expect(readFileSync(path, 'utf8')).toBe('a\n');
  });

  it('refuses an edit whose result would exceed the text cap', async () => {
    const path = fileWith('x'.repeat(64));
    const big = 'y'.repeat(LIMITS.editMaxTextBytes);
    const error = await editFails(path, [{ oldText: 'x', newText: big, replaceAll: true }]);
    expectKind(error, 'file_too_large', -32600);
    expect(readFileSync(path, 'utf8')).toBe('x'.repeat(64));
  });

  it('a sandboxed edit never follows a symlink at the edited name', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target'), 'keep\n');
    symlinkAt('target', join(dir, 'link'));
    const error = await fails(
      'fs/edit',
      {
        path: uri(join(dir, 'link')),
        edits: [{ oldText: 'keep', newText: 'x' }],
        sandbox: RESTRICTED_SANDBOX,
      },
      { guard: writableGuard(dir) },
    );
    expectKind(error, 'symlink_escape', -32600);
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('keep\n');
  });

  it('a guard that does not make the directory writable refuses the edit', async () => {
    const path = fileWith('keep\n');
    const error = await fails(
      'fs/edit',
      { path: uri(path), edits: [{ oldText: 'keep', newText: 'x' }], sandbox: RESTRICTED_SANDBOX },
      { guard: writableGuard(tempDir()) },
    );
    expectKind(error, 'permission_denied', -32600);
    expect(readFileSync(path, 'utf8')).toBe('keep\n');
  });
});
