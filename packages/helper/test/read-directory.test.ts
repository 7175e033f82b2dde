import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import {
  expectKind,
  fails,
  isLinux,
  isPosix,
  mkfifo,
  ok,
  symlinkAt,
  tempDir,
  uri,
} from './support/helper-run.js';

type Entry = { fileName: string; isDirectory: boolean; isFile: boolean; nonUtf8Name?: true };

async function entriesOf(dir: string): Promise<Entry[]> {
  const { response } = await ok('fs/readDirectory', { path: uri(dir) });
  return (response.entries as Entry[]).sort((a, b) => a.fileName.localeCompare(b.fileName));
}

describe('fs/readDirectory', () => {
  it('lists files and directories with their flags', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f.txt'), 'x');
    mkdirSync(join(dir, 'sub'));
    expect(await entriesOf(dir)).toEqual([
      { fileName: 'f.txt', isDirectory: false, isFile: true },
      { fileName: 'sub', isDirectory: true, isFile: false },
    ]);
  });

  it("answers sorted by the names' bytes, whatever order the directory keeps them in", async () => {
    const dir = tempDir();
    for (const name of ['sub-b', '.env', 'b.txt', 'B', 'a.txt', '_x']) writeFileSync(join(dir, name), '');
    const { response } = await ok('fs/readDirectory', { path: uri(dir) });
    expect((response.entries as Entry[]).map((entry) => entry.fileName)).toEqual([
      '.env',
      'B',
      '_x',
      'a.txt',
      'b.txt',
      'sub-b',
    ]);
  });

  it('follows symlinks for the flags and leaves out dangling ones', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    mkdirSync(join(dir, 'd'));
    symlinkAt('f', join(dir, 'to-file'));
    symlinkAt('d', join(dir, 'to-dir'));
    symlinkAt('missing', join(dir, 'dangling'));
    expect(await entriesOf(dir)).toEqual([
      { fileName: 'd', isDirectory: true, isFile: false },
      { fileName: 'f', isDirectory: false, isFile: true },
      { fileName: 'to-dir', isDirectory: true, isFile: false },
      { fileName: 'to-file', isDirectory: false, isFile: true },
    ]);
  });

  it.skipIf(!isPosix)('lists a FIFO as neither file nor directory (POSIX only)', async () => {
    const dir = tempDir();
    mkfifo(join(dir, 'pipe'));
    expect(await entriesOf(dir)).toEqual([{ fileName: 'pipe', isDirectory: false, isFile: false }]);
  });

  it.skipIf(!isLinux)(
    'marks a name that is not UTF-8 and percent-encodes its bad bytes and `%` (Linux only)',
    async () => {
      const dir = tempDir();
      writeFileSync(
        Buffer.concat([Buffer.from(`${dir}/a%b`), Buffer.from([0xff, 0xfe]), Buffer.from('é')]),
        'x',
      );
      writeFileSync(join(dir, 'plain%41'), 'y');
      expect(await entriesOf(dir)).toEqual([
        { fileName: 'a%25b%FF%FEé', isDirectory: false, isFile: true, nonUtf8Name: true },
        { fileName: 'plain%41', isDirectory: false, isFile: true },
      ]);
    },
  );

  it('reports a file as not_directory', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    const error = await fails('fs/readDirectory', { path: uri(join(dir, 'f')) });
    expectKind(error, 'not_directory', -32600);
    expect(error.message).toBe(`Not a directory: ${join(dir, 'f')}`);
  });

  it('reports a missing directory as not_found', async () => {
    const dir = tempDir();
    expectKind(await fails('fs/readDirectory', { path: uri(join(dir, 'nope')) }), 'not_found', -32004);
  });

  it(`stops at ${LIMITS.readDirectoryMaxEntries} entries and says it was truncated`, async () => {
    const dir = tempDir();
    // Names of one file: a link is one system call (50 001 writes timed out under load).
    writeFileSync(join(dir, 'f0'), '');
    for (let i = 1; i <= LIMITS.readDirectoryMaxEntries; i++) linkSync(join(dir, 'f0'), join(dir, `f${i}`));
    const { response } = await ok('fs/readDirectory', { path: uri(dir) });
    expect((response.entries as Entry[]).length).toBe(LIMITS.readDirectoryMaxEntries);
    expect(response.truncated).toBe(true);
  });
});
