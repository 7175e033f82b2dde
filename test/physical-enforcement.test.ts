import { execFileSync, spawn } from 'node:child_process';
import { existsSync, linkSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { lchown, mkdir, open, readdir, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, REPO } from './support/build.js';
import {
  type CliUser,
  callMethod,
  MATRIX_PRECHECK_MODES,
  NO_USER_NAMESPACES,
  NOBODY_UID,
  runCli,
  SECOND_LEG,
  USERS,
} from './support/cli.js';
import { startDirLinkToggler } from './support/dir-link-toggler.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { useServedBroker } from './support/served-broker.js';
import { diffTrees, snapshotTree } from './support/tree-snapshot.js';

/**
 * The red-team sequences against a real `fs-sandbox serve` (one per mode) and the races through the
 * real `fs-sandbox call`, under real bwrap, as root and as nobody,
 * with the broker's pre-check on and off: with it off, each refusal comes from the helper's check of
 * the physical location at use time (or the kernel), never from a textual check. After each attack
 * the host tree must show nothing but what the test planted.
 */

beforeAll(() => {
  ensureBuilt();
});

const REFUSED = ['protected_path', 'permission_denied'];

type Sandbox = Record<string, unknown>;

function withEntries(fixture: Fixture, ...extra: Array<[string, string]>): Sandbox {
  const context = workspaceContext(fixture) as {
    permissions: { file_system: { entries: unknown[] } };
  };
  for (const [path, access] of extra) {
    context.permissions.file_system.entries.push({ path: { type: 'path', path: uri(path) }, access });
  }
  return context as unknown as Sandbox;
}

/** A restricted context with exactly these file-system entries. */
function contextOf(entries: unknown[], cwd: string): Sandbox {
  return {
    permissions: { type: 'managed', network: 'restricted', file_system: { type: 'restricted', entries } },
    cwd: uri(cwd),
    windowsSandboxLevel: 'disabled',
  };
}

/** Files the test plants as root belong to nobody in the unprivileged runs, like the fixture's. */
async function chownFor(user: CliUser, ...paths: string[]): Promise<void> {
  if (user !== 'nobody') return;
  for (const path of paths) await lchown(path, NOBODY_UID, NOBODY_UID);
}

describe.each(USERS)('as %s', (user: CliUser) => {
  const chownForUser = (...paths: string[]) => chownFor(user, ...paths);

  describe.each(MATRIX_PRECHECK_MODES)('%s', (_mode, precheck) => {
    // One served broker per mode (served-broker.ts); linux-escapes smoke-tests `fs-sandbox call` per mode.
    const served = useServedBroker(user, precheck);
    let fixture: Fixture;

    beforeEach(async () => {
      fixture = await createFixture(user);
    });

    afterEach(async () => {
      await removeFixture(fixture);
    });

    const call = (
      method: string,
      params: Record<string, unknown>,
      sandbox: Sandbox = workspaceContext(fixture),
    ) => served.call(method, { ...params, sandbox });

    async function expectRefused(
      method: string,
      params: Record<string, unknown>,
      sandbox?: Sandbox,
      kinds: string[] = REFUSED,
    ): Promise<string> {
      const outcome = await call(method, params, sandbox);
      const label = `${method} ${JSON.stringify(params)}`;
      expect(outcome.code, `${label}: ${outcome.run.stdout}`).toBe(1);
      expect(kinds, `${label}: ${outcome.error?.message}`).toContain(outcome.error?.data.errorKind);
      return outcome.error?.message ?? '';
    }

    async function plantTemplates(): Promise<void> {
      // A readable tree an agent would copy: config that runs a command when git reads it.
      await mkdir(join(fixture.ro, 'tmpl'), { recursive: true });
      await writeFile(join(fixture.ro, 'tmpl', 'config'), '[core]\n\tfsmonitor = touch /tmp/pwned\n');
      await mkdir(join(fixture.ro, 'merge', '.codex'), { recursive: true });
      await writeFile(join(fixture.ro, 'merge', '.codex', 'AGENTS.md'), 'obey\n');
      await writeFile(join(fixture.ro, 'merge', 'plain.txt'), 'plain\n');
      await symlink('.', join(fixture.ro, 'dot'));
    }

    it('a loop-back link planted by a copy cannot create .git, .codex, .agents or a denied path', async () => {
      await plantTemplates();
      await rm(join(fixture.ws, '.git'), { recursive: true });
      const sandbox = withEntries(fixture, [join(fixture.ws, '.env'), 'deny']);
      // The plant itself is an ordinary symlink copy and is allowed.
      const planted = await call(
        'fs/copy',
        {
          sourcePath: uri(join(fixture.ro, 'dot')),
          destinationPath: uri(join(fixture.ws, 'x')),
          recursive: false,
        },
        sandbox,
      );
      expect(planted.code, planted.run.stdout).toBe(0);
      expect(lstatSync(join(fixture.ws, 'x')).isSymbolicLink()).toBe(true);
      await mkdir(join(fixture.ws, 'sub'), { recursive: true });
      await symlink('..', join(fixture.ws, 'sub', 'up'));
      await symlink(fixture.ws, join(fixture.ws, 'abs'));
      await chownForUser(join(fixture.ws, 'sub', 'up'), join(fixture.ws, 'abs'));
      const before = await snapshotTree(fixture.base);

      const aliases = [
        join(fixture.ws, 'x'),
        join(fixture.ws, 'sub', 'up'),
        join(fixture.ws, 'abs'),
        '/proc/self/cwd',
        `/proc/self/root${fixture.ws}`,
      ];
      for (const alias of aliases) {
        const tree = { sourcePath: uri(join(fixture.ro, 'tmpl')), recursive: true };
        await expectRefused('fs/copy', { ...tree, destinationPath: uri(join(alias, '.git')) }, sandbox);
        await expectRefused('fs/copy', { ...tree, destinationPath: uri(join(alias, '.codex')) }, sandbox);
        await expectRefused('fs/createDirectory', { path: uri(join(alias, '.agents', 'skills')) }, sandbox);
        await expectRefused('fs/writeFile', { path: uri(join(alias, '.env')), dataBase64: 'cHdu' }, sandbox);
        await expectRefused(
          'fs/writeFile',
          { path: uri(join(alias, '.git', 'config')), dataBase64: 'cHdu' },
          sandbox,
          [...REFUSED, 'not_found'],
        );
      }
      // Merging a tree that holds .codex into the root itself: refused before anything is copied.
      await expectRefused(
        'fs/copy',
        { sourcePath: uri(join(fixture.ro, 'merge')), destinationPath: uri(fixture.ws), recursive: true },
        sandbox,
      );
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
      for (const name of ['.git', '.codex', '.agents', '.env'])
        expect(existsSync(join(fixture.ws, name))).toBe(false);
    });

    it('a .git pointer file protects the git directory it names, relative, absolute and through commondir', async () => {
      await rm(join(fixture.ws, '.git'), { recursive: true });
      await mkdir(join(fixture.ws, '.bare', 'hooks'), { recursive: true });
      await writeFile(join(fixture.ws, '.bare', 'config'), '[core]\n');
      await writeFile(join(fixture.ws, '.git'), 'gitdir: ./.bare\n');
      await chownForUser(
        join(fixture.ws, '.bare'),
        join(fixture.ws, '.bare', 'hooks'),
        join(fixture.ws, '.bare', 'config'),
        join(fixture.ws, '.git'),
      );
      let before = await snapshotTree(fixture.base);
      await expectRefused('fs/writeFile', {
        path: uri(join(fixture.ws, '.bare', 'config')),
        dataBase64: 'cHdu',
      });
      await expectRefused('fs/writeFile', {
        path: uri(join(fixture.ws, '.bare', 'hooks', 'pre-commit')),
        dataBase64: 'cHdu',
      });
      await expectRefused('fs/remove', { path: uri(join(fixture.ws, '.bare')), recursive: true });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);

      // A linked worktree: an absolute gitdir whose `commondir` names the shared repository.
      const gitdir = join(fixture.ws, 'repo', 'worktrees', 'main');
      await mkdir(gitdir, { recursive: true });
      await writeFile(join(gitdir, 'commondir'), '../..\n');
      await writeFile(join(fixture.ws, 'repo', 'config'), '[core]\n');
      await writeFile(join(fixture.ws, '.git'), `gitdir: ${gitdir}\n`);
      await chownForUser(
        join(fixture.ws, 'repo'),
        join(fixture.ws, 'repo', 'worktrees'),
        gitdir,
        join(gitdir, 'commondir'),
        join(fixture.ws, 'repo', 'config'),
      );
      before = await snapshotTree(fixture.base);
      await expectRefused('fs/writeFile', { path: uri(join(gitdir, 'HEAD')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', {
        path: uri(join(fixture.ws, 'repo', 'config')),
        dataBase64: 'cHdu',
      });
      await expectRefused('fs/createDirectory', { path: uri(join(fixture.ws, 'repo', 'hooks')) });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });

    it('a git pointer stays protected through a symlink in its spelling, and when its target is missing', async () => {
      await rm(join(fixture.ws, '.git'), { recursive: true });
      await mkdir(join(fixture.ws, 'store', 'wt'), { recursive: true });
      await writeFile(join(fixture.ws, 'store', 'wt', 'config'), '[core]\n');
      await symlink('store', join(fixture.ws, 'link'));
      await writeFile(join(fixture.ws, '.git'), 'gitdir: link/wt\n');
      await chownForUser(
        join(fixture.ws, 'store'),
        join(fixture.ws, 'store', 'wt'),
        join(fixture.ws, 'store', 'wt', 'config'),
        join(fixture.ws, 'link'),
        join(fixture.ws, '.git'),
      );
      let before = await snapshotTree(fixture.base);
      // Re-pointing the link would swap the repository for one the agent wrote.
      await expectRefused('fs/remove', { path: uri(join(fixture.ws, 'link')) });
      await expectRefused('fs/writeFile', { path: uri(join(fixture.ws, 'link')), dataBase64: 'cHdu' });
      await expectRefused('fs/writeFile', {
        path: uri(join(fixture.ws, 'link', 'wt', 'config')),
        dataBase64: 'cHdu',
      });
      await expectRefused('fs/remove', { path: uri(join(fixture.ws, 'store')), recursive: true });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);

      // A stale pointer (the worktree's git directory is gone): creating it creates the repository.
      await writeFile(join(fixture.ws, '.git'), 'gitdir: gone/.git\n');
      await plantTemplates();
      before = await snapshotTree(fixture.base);
      await expectRefused('fs/createDirectory', {
        path: uri(join(fixture.ws, 'gone', '.git', 'hooks')),
        recursive: true,
      });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
      // With `gone` there (an ordinary directory anyone may make), its `.git` still may not be.
      await mkdir(join(fixture.ws, 'gone'));
      await chownForUser(join(fixture.ws, 'gone'));
      before = await snapshotTree(fixture.base);
      await expectRefused('fs/copy', {
        sourcePath: uri(join(fixture.ro, 'tmpl')),
        destinationPath: uri(join(fixture.ws, 'gone', '.git')),
        recursive: true,
      });
      expect(existsSync(join(fixture.ws, 'gone', '.git'))).toBe(false);
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });

    it('refuses a hard link to a file inside a denied directory', async () => {
      linkSync(join(fixture.ws, 'denied-dir', 'secret2.txt'), join(fixture.ws, 'sub', 'hl'));
      const outcome = await call('fs/readFile', { path: uri(join(fixture.ws, 'sub', 'hl')) });
      expect(outcome.code).toBe(1);
      expect(outcome.error?.data.errorKind).toBe('permission_denied');
      expect(outcome.run.stdout + outcome.run.stderr).not.toContain(
        Buffer.from('denied directory content\n').toString('base64'),
      );
    });

    it("the broker's own installation is read-only when a writable root holds it", async () => {
      const repo = resolve(REPO);
      const sandbox = contextOf([{ path: { type: 'path', path: uri(repo) }, access: 'write' }], repo);
      // The running program is the CLI package's bundle (the broker is bundled into it), with the
      // helper package it depends on; the shims' folder is where node looks for it.
      const dist = join(repo, 'packages', 'cli', 'dist');
      const shim = join(repo, 'node_modules', '.bin', 'fs-sandbox');
      const helperBundle = join(repo, 'packages', 'helper', 'dist', 'helper.cjs');
      // Under Landlock a writable root holding the launcher (the Bun helper) is refused outright,
      // typed: the launcher builds every later sandbox (docs/security.md "Landlock backend").
      const refusal = NO_USER_NAMESPACES
        ? { kinds: ['sandbox_unavailable'], text: 'lies inside the writable root' }
        : { kinds: ['protected_path'], text: 'own installation' };
      for (const file of [CLI_BIN, join(dist, 'cli.cjs'), helperBundle, shim]) {
        const bytes = readFileSync(file);
        // Its own bytes: if the write went through, nothing would be damaged, but the test fails.
        const message = await expectRefused(
          'fs/writeFile',
          { path: uri(file), dataBase64: bytes.toString('base64') },
          sandbox,
          refusal.kinds,
        );
        expect(message).toContain(refusal.text);
        expect(readFileSync(file).equals(bytes)).toBe(true);
      }
      // Where node looks for modules the broker loads (ws's optional bufferutil), and the shims' folder.
      for (const folder of [
        join(repo, 'node_modules', '.pnpm', 'ws@8.23.0', 'node_modules', 'bufferutil'),
        join(repo, 'node_modules', '.pnpm', 'node_modules', 'bufferutil'),
        join(repo, 'node_modules', 'bufferutil'),
      ]) {
        await expectRefused('fs/createDirectory', { path: uri(folder) }, sandbox, refusal.kinds);
        expect(existsSync(folder)).toBe(false);
      }
      // The Bun helper's package for this platform (packages/helper-linux-x64, where the build puts
      // the binary), protected whichever runtime this broker runs: a later one executes it.
      const bunPackage = join(repo, 'packages', `helper-${process.platform}-${process.arch}`);
      for (const planted of [join(dist, 'pwned.js'), join(bunPackage, 'bin', 'pwned')]) {
        await expectRefused(
          'fs/writeFile',
          { path: uri(planted), dataBase64: 'cHdu', mode: 'create' },
          sandbox,
          refusal.kinds,
        );
        expect(existsSync(planted)).toBe(false);
      }
    });

    it('protects .codex and .agents under special writable roots (slash_tmp) too', async () => {
      await plantTemplates();
      const existed = ['.codex', '.agents', 'plain.txt'].filter((name) => existsSync(join('/tmp', name)));
      const sandbox = contextOf(
        [
          { path: { type: 'special', value: { kind: 'slash_tmp' } }, access: 'write' },
          { path: { type: 'path', path: uri(fixture.ro) }, access: 'read' },
        ],
        fixture.ws,
      );
      // Under Landlock a checkout below /tmp puts the launcher inside this writable root: every
      // request is then refused outright, typed (as in the installation test above).
      const kinds =
        NO_USER_NAMESPACES && `${resolve(REPO)}/`.startsWith('/tmp/') ? ['sandbox_unavailable'] : REFUSED;
      try {
        await expectRefused(
          'fs/copy',
          { sourcePath: uri(join(fixture.ro, 'merge')), destinationPath: uri('/tmp'), recursive: true },
          sandbox,
          kinds,
        );
        await expectRefused('fs/createDirectory', { path: uri('/tmp/.agents') }, sandbox, kinds);
        for (const name of ['.codex', '.agents', 'plain.txt']) {
          if (!existed.includes(name)) expect(existsSync(join('/tmp', name)), name).toBe(false);
        }
      } finally {
        for (const name of ['.codex', '.agents', 'plain.txt']) {
          if (!existed.includes(name)) await rm(join('/tmp', name), { recursive: true, force: true });
        }
      }
    });

    it('refuses a tree remove that cannot finish before touching anything', async () => {
      await mkdir(join(fixture.ws, 'box'));
      await writeFile(join(fixture.ws, 'box', 'a.txt'), 'keep me\n');
      await writeFile(join(fixture.ws, 'box', 'secret.txt'), 'masked\n');
      await mkdir(join(fixture.ws, 'nest', 'inner'), { recursive: true });
      await writeFile(join(fixture.ws, 'nest', 'b.txt'), 'keep me too\n');
      await writeFile(join(fixture.ws, 'package.json'), '{}\n');
      await chownForUser(
        join(fixture.ws, 'box'),
        join(fixture.ws, 'box', 'a.txt'),
        join(fixture.ws, 'box', 'secret.txt'),
        join(fixture.ws, 'nest'),
        join(fixture.ws, 'nest', 'inner'),
        join(fixture.ws, 'nest', 'b.txt'),
        join(fixture.ws, 'package.json'),
      );
      const sandbox = withEntries(
        fixture,
        [join(fixture.ws, 'box', 'secret.txt'), 'deny'],
        [join(fixture.ws, 'nest', 'inner'), 'write'],
      );
      const before = await snapshotTree(fixture.base);
      // The writable root itself, which holds .git, denied paths and everything else.
      const root = await expectRefused('fs/remove', { path: uri(fixture.ws), recursive: true }, sandbox);
      expect(root).toMatch(/writable root|mount point|protected|denied/);
      await expectRefused('fs/remove', { path: uri(join(fixture.ws, 'box')), recursive: true }, sandbox);
      await expectRefused('fs/remove', { path: uri(join(fixture.ws, '.git')), recursive: true }, sandbox);
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
      const nest = await call('fs/remove', { path: uri(join(fixture.ws, 'nest')), recursive: true }, sandbox);
      if (NO_USER_NAMESPACES) {
        // Landlock mounts nothing: a tree holding another writable root holds only writable
        // entries, so it is removed whole (docs/security.md "Landlock backend").
        expect(nest.code, nest.run.stdout).toBe(0);
        expect(existsSync(join(fixture.ws, 'nest'))).toBe(false);
      } else {
        // Under bwrap the other root is a mount point, which cannot be removed: refused first.
        expect(nest.code, nest.run.stdout).toBe(1);
        expect(REFUSED).toContain(nest.error?.data.errorKind);
        expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
      }
    });

    it('refuses to read, copy or replace a hard link to a denied file', async () => {
      linkSync(join(fixture.ws, 'denied.txt'), join(fixture.ws, 'planted-link'));
      const before = await snapshotTree(fixture.base);
      for (const outcome of [
        await call('fs/readFile', { path: uri(join(fixture.ws, 'planted-link')) }),
        await call('fs/copy', {
          sourcePath: uri(join(fixture.ws, 'planted-link')),
          destinationPath: uri(join(fixture.ws, 'copied')),
          recursive: false,
        }),
        await call('fs/writeFile', { path: uri(join(fixture.ws, 'planted-link')), dataBase64: 'cHdu' }),
      ]) {
        expect(outcome.code).toBe(1);
        expect(outcome.error?.data.errorKind).toBe('permission_denied');
        expect(outcome.run.stdout + outcome.run.stderr).not.toContain('ZGVuaWVk');
        expect(outcome.run.stdout + outcome.run.stderr).not.toContain('denied file content');
      }
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });
  });

  describe('races and bounds (pre-check on)', () => {
    let fixture: Fixture;

    beforeEach(async () => {
      fixture = await createFixture(user);
    });

    afterEach(async () => {
      await removeFixture(fixture);
    });

    it('a directory swapped for a link to ../keep during a recursive remove never leads the remove there', async () => {
      const keep = join(fixture.ws, 'keep');
      await mkdir(keep);
      const kept = ['1', '2', '3', '4', '5'];
      for (const name of kept) await writeFile(join(keep, name), name);
      const target = join(fixture.ws, 't');
      // The toggler runs on the host, as root.
      const toggler = startDirLinkToggler(target);
      try {
        // Without a sandbox the remove runs in the broker's own process, under node in every leg:
        // a second leg (e2e-node, e2e-landlock) runs only the sandboxed rounds, which reach its
        // helper runtime or backend.
        for (const sandbox of SECOND_LEG ? [workspaceContext(fixture)] : [null, workspaceContext(fixture)]) {
          for (let round = 0; round < 12; round++) {
            await mkdir(target, { recursive: true });
            await callMethod(
              'fs/remove',
              { path: uri(target), recursive: true, sandbox },
              { user, env: cliEnv(fixture) },
            );
            expect((await readdir(keep)).sort(), `round ${round}`).toEqual(kept);
          }
        }
      } finally {
        toggler.kill('SIGKILL');
      }
      for (const name of kept) expect(readFileSync(join(keep, name), 'utf8')).toBe(name);
    }, 120_000);

    it('a hard link to a denied file planted while a tree copy runs is never copied', async () => {
      const source = join(fixture.ws, 'src');
      for (let d = 0; d < 60; d++) {
        await mkdir(join(source, `d${d}`), { recursive: true });
        for (let f = 0; f < 40; f++) await writeFile(join(source, `d${d}`, `f${f}`), 'plain\n');
      }
      const destination = join(fixture.ws, 'dst');
      // As soon as the copy has begun, the host swaps later files for links to the denied file.
      const planter = spawn(
        process.execPath,
        [
          '-e',
          `const fs = require('fs'); const end = Date.now() + 30000;
           while (!fs.existsSync(${JSON.stringify(destination)}) && Date.now() < end);
           for (let d = 59; d >= 20; d--) { const f = ${JSON.stringify(source)} + '/d' + d + '/f1';
             try { fs.unlinkSync(f); fs.linkSync(${JSON.stringify(join(fixture.ws, 'denied.txt'))}, f); } catch {} }`,
        ],
        { stdio: 'ignore' },
      );
      try {
        const outcome = await callMethod(
          'fs/copy',
          {
            sourcePath: uri(source),
            destinationPath: uri(destination),
            recursive: true,
            sandbox: workspaceContext(fixture),
          },
          { user, env: cliEnv(fixture), timeoutMs: 60_000 },
        );
        if (outcome.code !== 0) expect(outcome.error?.data.errorKind).toBe('permission_denied');
      } finally {
        planter.kill('SIGKILL');
      }
      const copied = existsSync(destination)
        ? execFileSync('sh', ['-c', 'grep -rl "denied file content" "$0" || true', destination], {
            encoding: 'utf8',
          }).trim()
        : '';
      expect(copied).toBe('');
    }, 90_000);

    it('copies a 4 GiB sparse file without filling its holes, and leaves no temporary file', async () => {
      const sparse = join(fixture.ws, 'sparse.bin');
      await writeFile(sparse, 'head');
      await truncate(sparse, 4 * 1024 ** 3);
      await chownForUser(sparse);
      const outcome = await callMethod(
        'fs/copy',
        {
          sourcePath: uri(sparse),
          destinationPath: uri(join(fixture.ws, 'sparse-copy.bin')),
          recursive: false,
          sandbox: workspaceContext(fixture),
        },
        { user, env: cliEnv(fixture), timeoutMs: 90_000 },
      );
      expect(outcome.code, outcome.run.stdout).toBe(0);
      const copy = statSync(join(fixture.ws, 'sparse-copy.bin'));
      expect(copy.size).toBe(4 * 1024 ** 3);
      expect(copy.blocks * 512).toBeLessThan(1024 * 1024);
      const handle = await open(join(fixture.ws, 'sparse-copy.bin'));
      const head = Buffer.alloc(4);
      await handle.read(head, 0, 4, 0);
      await handle.close();
      expect(head.toString()).toBe('head');
      expect((await readdir(fixture.ws)).filter((name) => name.startsWith('.fs-sandbox-'))).toEqual([]);
    }, 120_000);

    it('a helper killed mid-copy leaves no temporary file (a file copy, a tree copy, a file copied with recursive)', async () => {
      await mkdir(join(fixture.ws, 'big'));
      const sparse = join(fixture.ws, 'big', 'sparse.bin');
      await writeFile(sparse, 'head');
      // Sixty-four GiB of holes: the copy reads them for far longer than the timeout.
      await truncate(sparse, 64 * 1024 ** 3);
      await chownForUser(join(fixture.ws, 'big'), sparse);
      for (const [source, destination, recursive] of [
        [sparse, join(fixture.ws, 'copy.bin'), false],
        [join(fixture.ws, 'big'), join(fixture.ws, 'big-copy'), true],
        // `recursive` with a file source: its temporary file lies beside the destination, not below it.
        [sparse, join(fixture.ws, 'copy-recursive.bin'), true],
      ] as const) {
        const params = {
          sourcePath: uri(source),
          destinationPath: uri(destination),
          recursive,
          sandbox: workspaceContext(fixture),
        };
        const run = await runCli(['call', '--timeout', '1500', 'fs/copy', JSON.stringify(params)], {
          user,
          env: cliEnv(fixture),
        });
        expect(run.code, run.stdout).toBe(1);
        expect(JSON.parse(run.stdout).error.data.errorKind).toBe('timeout');
        const leftovers = execFileSync('find', [fixture.ws, '-name', '.fs-sandbox-*'], { encoding: 'utf8' });
        expect(leftovers).toBe('');
      }
    }, 60_000);
  });
});
