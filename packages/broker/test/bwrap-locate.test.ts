import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsError } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateBwrap } from '../src/backends/linux/bwrap-locate.js';

let dir: string;
let fakeBwrap: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-locate-')));
  fakeBwrap = join(dir, 'bwrap');
  await writeFile(fakeBwrap, '#!/bin/sh\nexit 0\n');
  await chmod(fakeBwrap, 0o755);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kindOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return (error as FsError).kind;
  }
  return 'resolved';
}

describe('locateBwrap', () => {
  it('finds bwrap on the sanitised PATH, ignoring the broker PATH', async () => {
    const found = await locateBwrap({ PATH: dir });
    expect(found).toBe(await realpath('/usr/bin/bwrap'));
  });

  it('honours an absolute FS_SANDBOX_BWRAP', async () => {
    expect(await locateBwrap({ FS_SANDBOX_BWRAP: fakeBwrap })).toBe(fakeBwrap);
  });

  it('refuses a relative or missing override with sandbox_unavailable (never an unsandboxed run)', async () => {
    expect(await kindOf(locateBwrap({ FS_SANDBOX_BWRAP: 'bwrap' }))).toBe('sandbox_unavailable');
    expect(await kindOf(locateBwrap({ FS_SANDBOX_BWRAP: join(dir, 'absent') }))).toBe('sandbox_unavailable');
  });

  it('refuses a non-executable override', async () => {
    const plain = join(dir, 'plain');
    await writeFile(plain, '');
    expect(await kindOf(locateBwrap({ FS_SANDBOX_BWRAP: plain }))).toBe('sandbox_unavailable');
  });

  it('refuses a bwrap that lies inside a writable root', async () => {
    expect(await kindOf(locateBwrap({ FS_SANDBOX_BWRAP: fakeBwrap }, [dir]))).toBe('sandbox_unavailable');
    expect(await kindOf(locateBwrap({}, ['/usr']))).toBe('sandbox_unavailable');
  });
});
