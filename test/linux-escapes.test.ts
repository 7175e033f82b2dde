import { chown, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import {
  type CliUser,
  callMethod,
  MATRIX_PRECHECK_MODES,
  NO_USER_NAMESPACES,
  NOBODY_UID,
  USERS,
} from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { useServedBroker } from './support/served-broker.js';
import { diffTrees, snapshotTree, type TreeSnapshot } from './support/tree-snapshot.js';

/**
 * Attacks through a real `fs-sandbox serve` (one per mode, see served-broker.ts) against real bwrap,
 * as root and as nobody, with the broker's pre-check on and off: with it off, every refusal below
 * comes from the kernel sandbox. After each request the whole fixture tree and the server's TMPDIR
 * must be unchanged and the secret must not appear anywhere in the output. A smoke test per mode
 * runs attacks through `fs-sandbox call` itself.
 */

beforeAll(() => {
  ensureBuilt();
});

describe.each(USERS)('as %s', (user: CliUser) => {
  describe.each(MATRIX_PRECHECK_MODES)('%s', (_mode, precheck) => {
    const served = useServedBroker(user, precheck);
    let fixture: Fixture;
    let before: TreeSnapshot;

    beforeEach(async () => {
      fixture = await createFixture(user);
      before = await snapshotTree(fixture.base);
    });

    afterEach(async () => {
      await removeFixture(fixture);
    });

    /** Runs one request that must be refused; checks the error is typed, the disk untouched, the secret unseen. */
    async function expectRefused(
      method: string,
      params: Record<string, unknown>,
      sandbox: Record<string, unknown> = workspaceContext(fixture),
      via: 'serve' | 'call' = 'serve',
    ): Promise<string> {
      const outcome =
        via === 'serve'
          ? await served.call(method, { ...params, sandbox })
          : await callMethod(method, { ...params, sandbox }, { user, env: cliEnv(fixture), precheck });
      const label = `${method} ${JSON.stringify(params)}`;
      if (NO_USER_NAMESPACES && method === 'fs/getMetadata' && outcome.code === 0) {
        // Beyond Landlock (docs/security.md "Landlock backend"): it does not govern stat(2), so the
        // metadata of a path outside the roots is answered. Its content still is not.
        expect(outcome.run.stdout + outcome.run.stderr, label).not.toContain('launch codes');
        expect(diffTrees(before, await snapshotTree(fixture.base)), label).toEqual([]);
        return 'metadata_beyond_landlock';
      }
      if (NO_USER_NAMESPACES && method === 'fs/walk' && outcome.code === 0) {
        // Under Landlock the walk's root exists and its listing is refused: the walk reports that
        // as an entry error (as for any unreadable directory), with nothing listed.
        expect(outcome.result?.entries, label).toEqual([]);
        expect(JSON.stringify(outcome.result?.errors), label).toContain('Permission denied');
        expect(diffTrees(before, await snapshotTree(fixture.base)), label).toEqual([]);
        return 'walk_listing_refused';
      }
      expect(outcome.code, label).toBe(1);
      expect(typeof outcome.error?.data.errorKind, label).toBe('string');
      expect(outcome.error?.data.errorKind, label).not.toBe('internal_error');
      expect(outcome.run.stdout + outcome.run.stderr, label).not.toContain('launch codes');
      expect(diffTrees(before, await snapshotTree(fixture.base)), label).toEqual([]);
      return outcome.error?.data.errorKind as string;
    }

    it('refuses escapes through `fs-sandbox call` itself: its flags and exit codes (a smoke test of the CLI path)', async () => {
      const ws = fixture.ws;
      const context = workspaceContext(fixture);
      await expectRefused('fs/readFile', { path: uri(join(ws, 'link-out')) }, context, 'call');
      await expectRefused(
        'fs/writeFile',
        { path: uri(join(fixture.outside, 'evil.txt')), dataBase64: 'cHdu' },
        context,
        'call',
      );
      await expectRefused('fs/readFile', { path: uri(join(ws, 'denied.txt')) }, context, 'call');
      await expectRefused(
        'fs/writeFile',
        { path: uri(join(ws, '.git', 'HEAD')), dataBase64: 'cHdu' },
        context,
        'call',
      );
    });

    it('refuses a symlink escape for every operation', async () => {
      const ws = fixture.ws;
      await expectRefused('fs/readFile', { path: uri(join(ws, 'link-out')) });
      await expectRefused('fs/readFile', { path: uri(join(ws, 'dirlink-out', 'secret.txt')) });
      await expectRefused('fs/writeFile', { path: uri(join(ws, 'link-out')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', {
        path: uri(join(ws, 'dirlink-out', 'evil.txt')),
        dataBase64: 'cHdu',
      });
      await expectRefused('fs/createDirectory', { path: uri(join(ws, 'dirlink-out', 'newdir')) });
      await expectRefused('fs/createDirectory', {
        path: uri(join(ws, 'dirlink-out', 'a', 'b')),
        recursive: true,
      });
      await expectRefused('fs/getMetadata', { path: uri(join(ws, 'link-out')) });
      await expectRefused('fs/getMetadata', { path: uri(join(ws, 'dirlink-out', 'secret.txt')) });
      await expectRefused('fs/readDirectory', { path: uri(join(ws, 'dirlink-out')) });
      await expectRefused('fs/walk', {
        path: uri(join(ws, 'dirlink-out')),
        options: { maxDepth: 4, maxDirectories: 10, maxEntries: 10, followDirectorySymlinks: true },
      });
      await expectRefused('fs/copy', {
        sourcePath: uri(join(ws, 'dirlink-out', 'secret.txt')),
        destinationPath: uri(join(ws, 'stolen.txt')),
        recursive: false,
      });
      await expectRefused('fs/copy', {
        sourcePath: uri(join(ws, 'hello.txt')),
        destinationPath: uri(join(ws, 'dirlink-out', 'planted.txt')),
        recursive: false,
      });
      await expectRefused('fs/remove', { path: uri(join(ws, 'dirlink-out', 'secret.txt')), force: false });
      await expectRefused('fs/remove', {
        path: uri(join(ws, 'dirlink-out', 'inner')),
        recursive: true,
        force: false,
      });
    });

    it.each([
      ['link-out', 'copied.txt', false, '../outside/secret.txt'],
      ['dirlink-out', 'copied-dir', true, '../outside'],
    ])(
      'a copy whose source is the escaping symlink %s copies the link, never the target',
      async (source, name, recursive, target) => {
        const outcome = await served.call('fs/copy', {
          sourcePath: uri(join(fixture.ws, source)),
          destinationPath: uri(join(fixture.ws, name)),
          recursive,
          sandbox: workspaceContext(fixture),
        });
        // Copied as a link (what the link says, not what it points to) or refused: never the content.
        const changes = diffTrees(before, await snapshotTree(fixture.base));
        if (outcome.code === 0) expect(changes).toEqual([`added ws/${name} (link ${target})`]);
        else expect(changes).toEqual([]);
        expect(outcome.run.stdout).not.toContain('launch codes');
      },
    );

    it('link/../secret resolves lexically and never reveals the secret', async () => {
      // The kernel would resolve deeplink/.. to outside/; the broker normalises the URI first.
      await expectRefused('fs/readFile', {
        path: uri(join(fixture.ws, 'deeplink')).concat('/../secret.txt'),
      });
      await expectRefused('fs/readFile', {
        path: `${uri(join(fixture.ws, 'dirlink-out'))}/inner/../secret.txt`,
      });
    });

    it('writes and directories outside the writable roots fail with a typed error and leave nothing', async () => {
      const { base, outside, ro } = fixture;
      await expectRefused('fs/writeFile', { path: uri(join(outside, 'evil.txt')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', { path: uri(join(ro, 'evil.txt')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', { path: uri(join(ro, 'r.txt')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', { path: uri(join(base, 'evil.txt')), dataBase64: 'cHdu' });
      // The reference reports success for these and writes into a throw-away tmpfs.
      await expectRefused('fs/createDirectory', { path: uri(join(outside, 'newdir')) });
      await expectRefused('fs/createDirectory', { path: uri(join(base, 'newdir')) });
      await expectRefused('fs/createDirectory', { path: uri(join(base, 'x', 'y')), recursive: true });
      await expectRefused('fs/createDirectory', { path: 'file:///fs-sandbox-e2e-top-level' });
      await expectRefused('fs/remove', { path: uri(join(outside, 'secret.txt')), force: false });
      await expectRefused('fs/remove', { path: uri(join(ro, 'r.txt')), force: false });
      await expectRefused('fs/copy', {
        sourcePath: uri(join(fixture.ws, 'hello.txt')),
        destinationPath: uri(join(outside, 'copy.txt')),
        recursive: false,
      });
      await expectRefused('fs/readFile', { path: uri(join(outside, 'secret.txt')) });
    });

    it("writes into the sandbox's private /dev fail instead of vanishing with a success", async () => {
      // bwrap's --dev is a fresh tmpfs: a file made there never reaches the host (silent loss).
      const name = `fs-sandbox-e2e-${process.pid}-${Date.now()}`;
      await expectRefused('fs/writeFile', { path: `file:///dev/shm/${name}`, dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', { path: `file:///dev/${name}`, dataBase64: 'cHdu' });
      await expectRefused('fs/createDirectory', { path: `file:///dev/shm/${name}` });
      await expectRefused('fs/createDirectory', { path: `file:///dev/${name}` });
    });

    it('a denied file stays masked when a symlink gives it a second name under a granted root', async () => {
      // `alias` -> `outside`: deny spelled through the link, root granted by its real name, and the reverse.
      const alias = join(fixture.base, 'alias');
      await symlink('outside', alias);
      before = await snapshotTree(fixture.base);
      const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });
      const context = (entries: unknown[]) => ({
        permissions: { type: 'managed', network: 'restricted', file_system: { type: 'restricted', entries } },
        windowsSandboxLevel: 'disabled',
      });
      const viaLink = context([entry(fixture.outside, 'write'), entry(join(alias, 'secret.txt'), 'deny')]);
      const viaRoot = context([entry(alias, 'write'), entry(join(fixture.outside, 'secret.txt'), 'deny')]);
      await expectRefused('fs/readFile', { path: uri(join(fixture.outside, 'secret.txt')) }, viaLink);
      await expectRefused('fs/readFile', { path: uri(join(alias, 'secret.txt')) }, viaRoot);
    });

    it('a read-only entry spelled through a symlink keeps its real name read-only inside a writable root', async () => {
      // `alias` -> `outside`: the root granted by its real name, the read entry through the link.
      const alias = join(fixture.base, 'alias');
      await symlink('outside', alias);
      before = await snapshotTree(fixture.base);
      const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });
      const root = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };
      const context = (entries: unknown[]) => ({
        permissions: { type: 'managed', network: 'restricted', file_system: { type: 'restricted', entries } },
        windowsSandboxLevel: 'disabled',
      });
      const grants = [entry(fixture.outside, 'write'), entry(join(alias, 'inner'), 'read')];
      const target = { path: uri(join(fixture.outside, 'inner', 'd')), dataBase64: 'cHdu' };
      await expectRefused('fs/writeFile', target, context(grants));
      await expectRefused('fs/writeFile', target, context([root, ...grants]));
    });

    it('a denied directory and a denied file are unreadable and unwritable', async () => {
      const { ws } = fixture;
      const dir = join(ws, 'denied-dir');
      const file = join(ws, 'denied.txt');
      await expectRefused('fs/readFile', { path: uri(join(dir, 'secret2.txt')) });
      await expectRefused('fs/readDirectory', { path: uri(dir) });
      await expectRefused('fs/getMetadata', { path: uri(join(dir, 'secret2.txt')) });
      await expectRefused('fs/writeFile', { path: uri(join(dir, 'new.txt')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', { path: uri(join(dir, 'secret2.txt')), dataBase64: 'cHdu' });
      await expectRefused('fs/remove', { path: uri(join(dir, 'secret2.txt')), force: false });
      await expectRefused('fs/createDirectory', { path: uri(join(dir, 'sub')) });
      await expectRefused('fs/readFile', { path: uri(file) });
      await expectRefused('fs/writeFile', { path: uri(file), dataBase64: 'cHdu' });
      await expectRefused('fs/remove', { path: uri(file), force: false });
      await expectRefused('fs/copy', {
        sourcePath: uri(file),
        destinationPath: uri(join(ws, 'leak.txt')),
        recursive: false,
      });
    });

    it('masks the existing matches of a deny glob', async () => {
      const config = join(fixture.ws, 'config');
      await mkdir(config);
      await writeFile(join(config, 'prod.env'), 'API_KEY=launch codes\n');
      if (user === 'nobody') await chown(config, NOBODY_UID, NOBODY_UID);
      before = await snapshotTree(fixture.base);
      const context = workspaceContext(fixture) as { permissions: { file_system: { entries: unknown[] } } };
      context.permissions.file_system.entries.push({
        // Scoped to config/: the workspace's links to `outside` refuse a `**` glob over all of it.
        path: { type: 'glob_pattern', pattern: `${fixture.ws}/config/**/*.env` },
        access: 'deny',
      });
      // Refused by the mask (or the pre-check), not by a sandbox that could not be built.
      expect(await expectRefused('fs/readFile', { path: uri(join(config, 'prod.env')) }, context)).not.toBe(
        'sandbox_unavailable',
      );
      await expectRefused(
        'fs/writeFile',
        { path: uri(join(config, 'prod.env')), dataBase64: 'cHdu' },
        context,
      );
      await expectRefused(
        'fs/copy',
        {
          sourcePath: uri(join(config, 'prod.env')),
          destinationPath: uri(join(fixture.ws, 'x')),
          recursive: false,
        },
        context,
      );
    });

    it('refuses writes into .git (hooks, HEAD) under a writable root', async () => {
      const git = join(fixture.ws, '.git');
      const kind = await expectRefused('fs/writeFile', {
        path: uri(join(git, 'hooks', 'pre-commit')),
        dataBase64: 'IyEvYmluL3NoCg==',
      });
      if (precheck) expect(kind).toBe('protected_path');
      await expectRefused('fs/writeFile', { path: uri(join(git, 'HEAD')), dataBase64: 'cHdu' });
      await expectRefused('fs/remove', { path: uri(join(git, 'HEAD')), force: false });
      await expectRefused('fs/createDirectory', { path: uri(join(git, 'hooks', 'x')) });
    });
  });
});

describe.each(USERS)('as %s, pre-check on', (user: CliUser) => {
  it('a recursive copy never creates a missing denied path inside its destination', async () => {
    // Nothing can be mounted over a missing path, so only the pre-check stands between the copy
    // and `dst/a.txt`.
    const fixture = await createFixture(user);
    try {
      const before = await snapshotTree(fixture.base);
      const context = workspaceContext(fixture) as { permissions: { file_system: { entries: unknown[] } } };
      context.permissions.file_system.entries.push({
        path: { type: 'path', path: uri(join(fixture.ws, 'dst', 'a.txt')) },
        access: 'deny',
      });
      const outcome = await callMethod(
        'fs/copy',
        {
          sourcePath: uri(join(fixture.ws, 'sub')),
          destinationPath: uri(join(fixture.ws, 'dst')),
          recursive: true,
          sandbox: context,
        },
        { user, env: cliEnv(fixture) },
      );
      expect(outcome.error?.data.errorKind).toBe('permission_denied');
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    } finally {
      await removeFixture(fixture);
    }
  });
});
