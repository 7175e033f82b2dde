import { chown, lstat, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, callMethod, NO_USER_NAMESPACES, NOBODY_UID, runCli, USERS } from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { diffTrees, snapshotTree } from './support/tree-snapshot.js';

/**
 * The allowed side through the real CLI and bwrap: every reported success is on disk, the context
 * errors are the exact reference texts, a FIFO cannot hang the helper, and `doctor` and `demo`
 * pass on this machine as root and as nobody.
 */

beforeAll(() => {
  ensureBuilt();
});

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;

  beforeEach(async () => {
    fixture = await createFixture(user);
  });

  afterEach(async () => {
    await removeFixture(fixture);
  });

  const call = (method: string, params: Record<string, unknown>) =>
    callMethod(method, { ...params, sandbox: workspaceContext(fixture) }, { user, env: cliEnv(fixture) });

  async function ok(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const outcome = await call(method, params);
    expect(outcome.code, `${method}: ${outcome.run.stdout}${outcome.run.stderr}`).toBe(0);
    return outcome.result as Record<string, unknown>;
  }

  it('every reported success is on disk', async () => {
    const { ws, ro } = fixture;
    const data = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31 + 7) % 256;
    const file = join(ws, 'data.bin');
    expect(await ok('fs/writeFile', { path: uri(file), dataBase64: data.toString('base64') })).toEqual({});
    expect((await readFile(file)).equals(data)).toBe(true);

    const read = await ok('fs/readFile', { path: uri(file) });
    expect(read.dataBase64).toBe(data.toString('base64'));
    expect((await ok('fs/readFile', { path: uri(join(ro, 'r.txt')) })).dataBase64).toBe(
      Buffer.from('read only\n').toString('base64'),
    );

    await ok('fs/createDirectory', { path: uri(join(ws, 'a', 'b', 'c')), recursive: true });
    expect((await stat(join(ws, 'a', 'b', 'c'))).isDirectory()).toBe(true);

    await ok('fs/copy', {
      sourcePath: uri(join(ws, 'sub')),
      destinationPath: uri(join(ws, 'a', 'sub-copy')),
      recursive: true,
    });
    expect(await readFile(join(ws, 'a', 'sub-copy', 'a.txt'), 'utf8')).toBe('a\n');
    await ok('fs/copy', {
      sourcePath: uri(join(ro, 'r.txt')),
      destinationPath: uri(join(ws, 'r-copy.txt')),
      recursive: false,
    });
    expect(await readFile(join(ws, 'r-copy.txt'), 'utf8')).toBe('read only\n');

    const metadata = await ok('fs/getMetadata', { path: uri(file) });
    expect(metadata).toMatchObject({ isFile: true, isDirectory: false, isSymlink: false, size: data.length });

    const listing = await ok('fs/readDirectory', { path: uri(join(ws, 'sub')) });
    expect(listing.entries).toEqual([{ fileName: 'a.txt', isDirectory: false, isFile: true }]);

    expect(await ok('fs/canonicalize', { path: uri(join(ws, 'sub', '..', 'hello.txt')) })).toEqual({
      path: uri(join(ws, 'hello.txt')),
    });

    const walk = await ok('fs/walk', {
      path: uri(join(ws, 'a')),
      options: { maxDepth: 8, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false },
    });
    expect((walk.entries as { path: string }[]).map((entry) => entry.path)).toContain(
      uri(join(ws, 'a', 'b', 'c')),
    );

    await ok('fs/remove', { path: uri(join(ws, 'a')), recursive: true, force: false });
    await expect(lstat(join(ws, 'a'))).rejects.toThrow();
    await ok('fs/writeFile', {
      path: uri(join(ws, 'hello.txt')),
      dataBase64: Buffer.from('replaced\n').toString('base64'),
    });
    expect(await readFile(join(ws, 'hello.txt'), 'utf8')).toBe('replaced\n');
    // Nothing else appeared: no temp files of the atomic writes, no mount placeholders.
    expect((await readdir(ws)).sort()).toEqual(
      [
        '.git',
        'data.bin',
        'deeplink',
        'denied-dir',
        'denied.txt',
        'dirlink-out',
        'fifo',
        'hello.txt',
        'link-out',
        'r-copy.txt',
        'sub',
      ].sort(),
    );
  });

  it('answers a FIFO read with an error promptly instead of hanging', async () => {
    const before = await snapshotTree(fixture.base);
    const outcome = await call('fs/readFile', { path: uri(join(fixture.ws, 'fifo')) });
    expect(outcome.error?.data.errorKind).toBe('not_regular_file');
    expect(outcome.run.ms).toBeLessThan(15_000);
    const copy = await call('fs/copy', {
      sourcePath: uri(join(fixture.ws, 'fifo')),
      destinationPath: uri(join(fixture.ws, 'fifo-copy')),
      recursive: false,
    });
    expect(copy.code).toBe(1);
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });

  it('reports the exact cwd errors, with no fallback', async () => {
    const base = workspaceContext(fixture);
    const nonNative = await callMethod(
      'fs/readFile',
      { path: uri(join(fixture.ws, 'hello.txt')), sandbox: { ...base, cwd: 'file:///C:/work' } },
      { user, env: cliEnv(fixture) },
    );
    expect(nonNative.error).toEqual({
      code: -32602,
      message: "'file:///C:/work' is invalid on 'linux'",
      data: { errorKind: 'invalid_params' },
    });
    const { cwd: _cwd, ...withoutCwd } = base;
    const dynamic = await callMethod(
      'fs/readFile',
      {
        path: uri(join(fixture.ws, 'hello.txt')),
        sandbox: {
          ...withoutCwd,
          permissions: {
            type: 'managed',
            file_system: {
              type: 'restricted',
              entries: [{ path: { type: 'special', value: { kind: 'project_roots' } }, access: 'write' }],
            },
          },
        },
      },
      { user, env: cliEnv(fixture) },
    );
    expect(dynamic.error).toEqual({
      code: -32602,
      message: 'file system sandbox context with dynamic permissions requires cwd',
      data: { errorKind: 'invalid_params' },
    });
  });

  it('rejects invalid base64 with the reference message', async () => {
    const outcome = await call('fs/writeFile', {
      path: uri(join(fixture.ws, 'bad.txt')),
      dataBase64: '%%%not-base64',
    });
    expect(outcome.error).toEqual({
      code: -32600,
      message: 'fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.',
      data: { errorKind: 'invalid_request' },
    });
  });

  it('refuses to run unsandboxed when bwrap is missing or cannot build the sandbox', async () => {
    const fake = join(fixture.base, 'fake-bwrap');
    await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    if (user === 'nobody') await chown(fake, NOBODY_UID, NOBODY_UID);
    const target = join(fixture.ws, 'never.txt');
    for (const bwrap of [join(fixture.base, 'no-such-bwrap'), fake]) {
      const outcome = await callMethod(
        'fs/writeFile',
        { path: uri(target), dataBase64: 'eA==', sandbox: workspaceContext(fixture) },
        // bwrap required: auto would take the Landlock backend (landlock-backend.test.ts).
        { user, env: cliEnv(fixture, { FS_SANDBOX_BWRAP: bwrap, FS_SANDBOX_BACKEND: 'bwrap' }) },
      );
      expect(outcome.error?.data.errorKind, outcome.run.stdout).toBe('sandbox_unavailable');
      await expect(lstat(target)).rejects.toThrow();
    }
    const doctor = await runCli(['doctor'], {
      user,
      env: cliEnv(fixture, { FS_SANDBOX_BWRAP: fake, FS_SANDBOX_BACKEND: 'bwrap' }),
    });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^user namespaces\s+FAIL\s+bwrap: No permissions/m);
    // The failure names its remedy, and the report fits 100 columns.
    expect(doctor.stdout).toMatch(/^\s+fix: /m);
    for (const line of doctor.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('doctor says sandboxed operations work (exit 0)', async () => {
    const run = await runCli(['doctor'], { user, env: cliEnv(fixture) });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // Without user namespaces (e2e-landlock) the user namespace check is information, not a failure.
    expect(run.stdout).toMatch(
      NO_USER_NAMESPACES ? /^user namespaces\s+info\s+bwrap: /m : /^user namespaces\s+ok/m,
    );
    expect(run.stdout).toMatch(
      new RegExp(
        `^sandboxed operation\\s+ok\\s+write \\+ read under ${NO_USER_NAMESPACES ? 'landlock' : 'bwrap'}`,
        'm',
      ),
    );
    expect(await readdir(fixture.tmp)).toEqual([]);
  });

  it('demo runs its story with every step as expected, with and without the pre-check', async () => {
    for (const flags of [[], ['--no-precheck']]) {
      const run = await runCli(['demo', ...flags], { user, env: cliEnv(fixture) });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toContain('every step behaved as expected');
      expect(run.stdout).not.toMatch(/\bNO\b/);
    }
    expect(await readdir(fixture.tmp)).toEqual([]);
  });
});
