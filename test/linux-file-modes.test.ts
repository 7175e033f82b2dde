import { chmod, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliRun, type CliUser, callMethod, runCli, USERS } from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';

/**
 * The modes new files and directories get on the host, through the real CLI, broker and bwrap:
 * the helper's umask is the one the CLI was started with (bwrap passes it through), so a new file
 * is 0666 and a new directory 0777 under it, as with any editor or the Codex reference.
 */

beforeAll(() => {
  ensureBuilt();
});

/**
 * Starts `start` with the process umask set to `mask`: the CLI is spawned synchronously inside it
 * (before its first await) and inherits the mask; this process gets its own back right after.
 */
async function underUmask<T>(mask: number, start: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask);
  let pending: Promise<T>;
  try {
    pending = start();
  } finally {
    process.umask(previous);
  }
  return await pending;
}

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o7777;

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;

  beforeEach(async () => {
    fixture = await createFixture(user);
  });

  afterEach(async () => {
    await removeFixture(fixture);
  });

  async function ok(mask: number, method: string, params: Record<string, unknown>): Promise<void> {
    const outcome = await underUmask(mask, () =>
      callMethod(method, { ...params, sandbox: workspaceContext(fixture) }, { user, env: cliEnv(fixture) }),
    );
    expect(outcome.code, `${method}: ${outcome.run.stdout}${outcome.run.stderr}`).toBe(0);
  }

  function write(mask: number, args: readonly string[]): Promise<CliRun> {
    const sandbox = ['--profile', 'workspace-write', '--cwd', fixture.ws];
    return underUmask(mask, () => runCli(['write', ...sandbox, ...args], { user, env: cliEnv(fixture) }));
  }

  it.each([
    [0o022, 0o644, 0o755],
    [0o077, 0o600, 0o700],
  ])('umask %o: a new file is %o, a new directory %o', async (mask, fileMode, dirMode) => {
    const { ws } = fixture;
    await ok(mask, 'fs/writeFile', { path: uri(join(ws, 'new.txt')), dataBase64: 'aGk=' });
    expect(await modeOf(join(ws, 'new.txt'))).toBe(fileMode);
    await ok(mask, 'fs/writeFile', { path: uri(join(ws, 'c.txt')), dataBase64: 'aGk=', mode: 'create' });
    expect(await modeOf(join(ws, 'c.txt'))).toBe(fileMode);

    const shortcut = await write(mask, [join(ws, 'cli.txt'), 'hi']);
    expect(shortcut.code, shortcut.stderr).toBe(0);
    expect(await modeOf(join(ws, 'cli.txt'))).toBe(fileMode);

    await ok(mask, 'fs/createDirectory', { path: uri(join(ws, 'a', 'b')), recursive: true });
    expect(await modeOf(join(ws, 'a'))).toBe(dirMode);
    expect(await modeOf(join(ws, 'a', 'b'))).toBe(dirMode);
    await ok(mask, 'fs/createDirectory', { path: uri(join(ws, 'one')), recursive: false });
    expect(await modeOf(join(ws, 'one'))).toBe(dirMode);

    // A copied file keeps its source's mode (as the reference's std::fs::copy does); the copy's
    // directories are new directories.
    await chmod(join(ws, 'sub', 'a.txt'), 0o640);
    await ok(mask, 'fs/copy', {
      sourcePath: uri(join(ws, 'sub')),
      destinationPath: uri(join(ws, 'sub-copy')),
      recursive: true,
    });
    expect(await modeOf(join(ws, 'sub-copy'))).toBe(dirMode);
    expect(await modeOf(join(ws, 'sub-copy', 'a.txt'))).toBe(0o640);
  });

  it('a replaced file keeps its mode whatever the umask', async () => {
    const path = join(fixture.ws, 'hello.txt');
    await chmod(path, 0o664);
    await ok(0o077, 'fs/writeFile', { path: uri(path), dataBase64: 'aGk=' });
    expect(await modeOf(path)).toBe(0o664);
  });

  it('write --mode (permissions) is the exact mode of a new or replaced file', async () => {
    const { ws } = fixture;
    const created = await write(0o022, ['--mode', '0600', join(ws, 'private.txt'), 'secret']);
    expect(created.code, created.stderr).toBe(0);
    expect(await modeOf(join(ws, 'private.txt'))).toBe(0o600);

    const widened = await write(0o077, ['--mode', '755', join(ws, 'private.txt'), '#!/bin/sh']);
    expect(widened.code, widened.stderr).toBe(0);
    expect(await modeOf(join(ws, 'private.txt'))).toBe(0o755);

    await writeFile(join(ws, 'kept.txt'), 'old');
    await chmod(join(ws, 'kept.txt'), 0o644);
    const refused = await write(0o022, ['--mode', '4755', join(ws, 'kept.txt'), 'new']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('[invalid_params]');
    expect(await modeOf(join(ws, 'kept.txt'))).toBe(0o644);
  });
});
