import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { lstat, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServeProcess } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { callMethod, runCli } from './support/cli.js';
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

/** One slot of a batch's results, as the tests read it. */
type Slot = {
  result?: { dataBase64?: string; isFile?: boolean };
  error?: { code: number; message: string; data: { errorKind: string } };
};

/**
 * fs/rename, fs/batch, fs/explainAccess and the trust gate through the real CLI, `fs-sandbox serve`
 * and bwrap, with the host checked afterwards. The attacks try to move a protected or denied path
 * by another spelling and assert nothing outside the operation changed.
 */

beforeAll(() => {
  ensureBuilt();
});

let fixture: Fixture;
const extraDirs: string[] = [];

beforeEach(async () => {
  fixture = await createFixture('root');
});

afterEach(async () => {
  await removeFixture(fixture);
  for (const dir of extraDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });

/** The suites' workspace context with more entries (another root, another denied path). */
function contextWith(...more: Array<Record<string, unknown>>): Record<string, unknown> {
  const context = workspaceContext(fixture) as { permissions: { file_system: { entries: unknown[] } } };
  context.permissions.file_system.entries.push(...more);
  return context;
}

const cli = (args: string[]) => runCli(args, { user: 'root', env: cliEnv(fixture), cwd: fixture.ws });

describe('fs-sandbox mv', () => {
  it('renames, keeps an existing destination unless --force, and replaces it with --force', async () => {
    const { ws } = fixture;
    await writeFile(join(ws, 'b.txt'), 'old b\n');
    const kept = await cli(['mv', 'hello.txt', 'b.txt']);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain('(use mv --force to replace it) [already_exists]');
    expect(await readFile(join(ws, 'b.txt'), 'utf8')).toBe('old b\n');
    const forced = await cli(['mv', '--force', 'hello.txt', 'b.txt']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await readFile(join(ws, 'b.txt'), 'utf8')).toBe('hello sandbox\n');
    expect(existsSync(join(ws, 'hello.txt'))).toBe(false);
    const json = await cli(['mv', '--json', 'sub', 'sub2']);
    expect(json.stdout).toBe('{}\n');
    expect(await readFile(join(ws, 'sub2', 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('moves a symlink itself, never its target', async () => {
    const { ws, outside } = fixture;
    const run = await cli(['mv', 'link-out', 'moved-link']);
    expect(run.code, run.stderr).toBe(0);
    expect((await lstat(join(ws, 'moved-link'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(ws, 'moved-link'))).toBe('../outside/secret.txt');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(fixture.secretText);
  });
});

describe('fs/rename refusals', () => {
  // The two matrices below send their cases to one served broker per pre-check mode
  // (served-broker.ts); the cases just below and `fs-sandbox mv` keep the CLI's own path.
  const servedBy = { on: useServedBroker('root', true), off: useServedBroker('root', false) };
  const refusal = (params: Record<string, unknown>, precheck: boolean) =>
    servedBy[precheck ? 'on' : 'off'].call('fs/rename', { sandbox: workspaceContext(fixture), ...params });

  for (const precheck of [true, false]) {
    it(`refuses a directory holding a denied file and moves nothing (pre-check ${precheck ? 'on' : 'off'})`, async () => {
      const { ws } = fixture;
      await mkdir(join(ws, 'proj'));
      await writeFile(join(ws, 'proj', 'secret.env'), 'KEY=1\n');
      await writeFile(join(ws, 'proj', 'code.ts'), 'x\n');
      const before = await snapshotTree(fixture.base);
      const outcome = await callMethod(
        'fs/rename',
        {
          sourcePath: uri(join(ws, 'proj')),
          destinationPath: uri(join(ws, 'moved')),
          sandbox: contextWith(entry(join(ws, 'proj', 'secret.env'), 'deny')),
        },
        { user: 'root', env: cliEnv(fixture), precheck },
      );
      expect(outcome.error?.data.errorKind).toBe('permission_denied');
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });
  }

  it('never moves the writable root, .git, what is in it, or a file into it', async () => {
    const { ws } = fixture;
    const before = await snapshotTree(fixture.base);
    const tries: Array<[string, string, string]> = [
      [ws, join(fixture.base, 'ws-moved'), 'permission_denied'],
      [join(ws, '.git'), join(ws, 'git-moved'), 'protected_path'],
      [join(ws, '.git', 'HEAD'), join(ws, 'HEAD'), 'protected_path'],
      [join(ws, 'hello.txt'), join(ws, '.git', 'hooks', 'pre-commit'), 'protected_path'],
      [join(ws, 'denied-dir'), join(ws, 'open-dir'), 'permission_denied'],
      [join(ws, 'hello.txt'), join(ws, 'denied.txt'), 'permission_denied'],
      [join(ws, 'hello.txt'), join(ws, 'sub', 'a.txt'), 'already_exists'],
      [join(ws, 'sub'), join(ws, 'sub', 'inner'), 'invalid_request'],
      [join(ws, 'sub'), join(ws, 'sub'), 'invalid_request'],
      [join(ws, 'missing'), join(ws, 'x'), 'not_found'],
    ];
    for (const precheck of [true, false]) {
      for (const [source, destination, kind] of tries) {
        const outcome = await refusal(
          { sourcePath: uri(source), destinationPath: uri(destination) },
          precheck,
        );
        expect(outcome.error?.data.errorKind, `${source} -> ${destination} (pre-check ${precheck})`).toBe(
          kind,
        );
      }
    }
    // A second writable root that holds its own .git: the root is a mount, never moved.
    await mkdir(join(ws, 'repo', '.git'), { recursive: true });
    const nested = await callMethod(
      'fs/rename',
      {
        sourcePath: uri(join(ws, 'repo')),
        destinationPath: uri(join(ws, 'repo2')),
        sandbox: contextWith(entry(join(ws, 'repo'), 'write')),
      },
      { user: 'root', env: cliEnv(fixture) },
    );
    expect(nested.error?.data.errorKind).toBe('permission_denied');
    await rm(join(ws, 'repo'), { recursive: true });
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });

  it('red team: protected and denied paths spelled through a symlinked parent, `..` and /proc/self/root stay put', async () => {
    const { ws } = fixture;
    await symlink('.', join(ws, 'loop'));
    await symlink('denied-dir', join(ws, 'to-denied'));
    const before = await snapshotTree(fixture.base);
    const spellings: Array<[string, string]> = [
      [`${uri(ws)}/loop/.git`, uri(join(ws, 'stolen'))],
      [`${uri(ws)}/loop/loop/.git/HEAD`, uri(join(ws, 'stolen'))],
      [`${uri(ws)}/sub/../.git`, uri(join(ws, 'stolen'))],
      [uri(`/proc/self/root${ws}/.git`), uri(join(ws, 'stolen'))],
      [uri(`/proc/self/root${ws}/denied.txt`), uri(join(ws, 'stolen'))],
      [`${uri(ws)}/loop/denied.txt`, uri(join(ws, 'stolen'))],
      [`${uri(ws)}/to-denied/secret2.txt`, uri(join(ws, 'stolen'))],
      [uri(join(ws, 'hello.txt')), `${uri(ws)}/loop/.git/hooks/pre-commit`],
      [uri(join(ws, 'hello.txt')), uri(`/proc/self/root${ws}/.git/hooks/pre-commit`)],
      [uri(join(ws, 'hello.txt')), `${uri(ws)}/loop/denied-dir/planted`],
      [uri(join(ws, 'sub')), `${uri(ws)}/dirlink-out/sub`],
    ];
    for (const precheck of [true, false]) {
      for (const [sourcePath, destinationPath] of spellings) {
        const outcome = await refusal({ sourcePath, destinationPath }, precheck);
        expect(
          outcome.code,
          `${sourcePath} -> ${destinationPath} (pre-check ${precheck}): ${outcome.run.stdout}`,
        ).toBe(1);
        expect(['permission_denied', 'protected_path', 'not_found', 'symlink_escape']).toContain(
          outcome.error?.data.errorKind,
        );
      }
    }
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });
});

describe('fs/rename across two writable roots', () => {
  /** Moves the workspace's `sub` to `other/name`, with `other` a second writable root. */
  const moveSubInto = (other: string, name: string) =>
    callMethod(
      'fs/rename',
      {
        sourcePath: uri(join(fixture.ws, 'sub')),
        destinationPath: uri(join(other, name)),
        sandbox: contextWith(entry(other, 'write')),
      },
      { user: 'root', env: cliEnv(fixture) },
    );

  it('copies then removes between two bound roots on the same disk, and says so', async () => {
    const other = join(fixture.base, 'other');
    await mkdir(other);
    const outcome = await moveSubInto(other, 'sub');
    expect(outcome.code, outcome.run.stdout).toBe(0);
    // Each writable root is its own bind mount in bwrap, so rename(2) between them is EXDEV.
    expect(outcome.result).toEqual({ copiedAcrossDevices: true });
    expect(existsSync(join(fixture.ws, 'sub'))).toBe(false);
    expect(await readFile(join(other, 'sub', 'a.txt'), 'utf8')).toBe('a\n');
  });

  const shm = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync('/tmp').dev;
  it.runIf(shm)(
    'moves a tree onto another file system (/dev/shm, a tmpfs) with its link (skipped where /dev/shm is not a second file system)',
    async () => {
      const other = mkdtempSync('/dev/shm/fs-sandbox-e2e-');
      extraDirs.push(other);
      await symlink('a.txt', join(fixture.ws, 'sub', 'alias'));
      const outcome = await moveSubInto(other, 'moved');
      expect(outcome.result).toEqual({ copiedAcrossDevices: true });
      expect(await readFile(join(other, 'moved', 'a.txt'), 'utf8')).toBe('a\n');
      expect(await readlink(join(other, 'moved', 'alias'))).toBe('a.txt');
      expect(existsSync(join(fixture.ws, 'sub'))).toBe(false);
    },
  );
});

describe('fs/batch through fs-sandbox serve', () => {
  let served: ServeProcess;
  beforeEach(async () => {
    served = ServeProcess.start([], { env: cliEnv(fixture) });
    await served.handshake();
  });
  afterEach(async () => {
    await served.stop();
  });

  it('reads 100 files in one call, three failures answered in their slots', async () => {
    const { ws } = fixture;
    await mkdir(join(ws, 'many'));
    const operations = [];
    for (let i = 0; i < 100; i++) {
      await writeFile(join(ws, 'many', `f${i}`), `file ${i}\n`);
      operations.push({ method: 'fs/readFile', params: { path: uri(join(ws, 'many', `f${i}`)) } });
    }
    operations[10] = { method: 'fs/readFile', params: { path: uri(join(ws, 'many', 'missing')) } };
    operations[50] = { method: 'fs/readFile', params: { path: uri(join(ws, 'denied.txt')) } };
    operations[99] = { method: 'fs/readFile', params: { path: uri(join(fixture.outside, 'secret.txt')) } };
    const reply = await served.request('fs/batch', { operations, sandbox: workspaceContext(fixture) });
    const results = reply.result?.results as Slot[];
    expect(results).toHaveLength(100);
    for (let i = 0; i < 100; i++) {
      if (i === 10 || i === 50 || i === 99) continue;
      expect(Buffer.from(results[i]?.result?.dataBase64 ?? '', 'base64').toString(), `slot ${i}`).toBe(
        `file ${i}\n`,
      );
    }
    expect(results[10]?.error?.data.errorKind).toBe('not_found');
    expect(results[50]?.error?.data.errorKind).toBe('permission_denied');
    expect(results[99]?.error?.data.errorKind).toBe('permission_denied');
    expect(JSON.stringify(results)).not.toContain(Buffer.from(fixture.secretText).toString('base64'));
  });

  it('runs writes, renames and removes in order, each on its own, and checks the host', async () => {
    const { ws } = fixture;
    const reply = await served.request('fs/batch', {
      sandbox: workspaceContext(fixture),
      operations: [
        { method: 'fs/createDirectory', params: { path: uri(join(ws, 'out')) } },
        { method: 'fs/writeFile', params: { path: uri(join(ws, 'out', 'w.bin')), dataBase64: 'AAEC/w==' } },
        {
          method: 'fs/writeFile',
          params: { path: uri(join(ws, '.git', 'hooks', 'post')), dataBase64: 'eA==' },
        },
        {
          method: 'fs/rename',
          params: { sourcePath: uri(join(ws, 'out', 'w.bin')), destinationPath: uri(join(ws, 'w.bin')) },
        },
        { method: 'fs/readFile', params: { path: uri(join(ws, 'w.bin')) } },
        { method: 'fs/remove', params: { path: uri(join(ws, 'out')) } },
        { method: 'fs/readFile', params: { path: uri(join(ws, 'hello.txt')), sandbox: null } },
        { method: 'fs/open', params: { handleId: 'h', path: uri(join(ws, 'hello.txt')) } },
      ],
    });
    const results = reply.result?.results as Slot[];
    expect(results.map((outcome) => outcome.error?.data.errorKind ?? 'ok')).toEqual([
      'ok',
      'ok',
      'protected_path',
      'ok',
      'ok',
      'ok',
      'invalid_params',
      'invalid_params',
    ]);
    expect(results[4]?.result?.dataBase64).toBe('AAEC/w==');
    expect(await readFile(join(ws, 'w.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(existsSync(join(ws, 'out'))).toBe(false);
    expect(existsSync(join(ws, '.git', 'hooks', 'post'))).toBe(false);
  });

  it('refuses more than 256 operations as a whole', async () => {
    const operations = Array.from({ length: 257 }, () => ({
      method: 'fs/readFile',
      params: { path: uri(join(fixture.ws, 'hello.txt')) },
    }));
    const reply = await served.request('fs/batch', { operations, sandbox: workspaceContext(fixture) });
    expect(reply.error?.data.errorKind).toBe('invalid_params');
  });
});

describe('fs/explainAccess', () => {
  it('matches enforcement: write ⇔ a sandboxed write succeeds, none ⇔ a sandboxed read fails', async () => {
    const { ws, ro, outside } = fixture;
    const served = ServeProcess.start([], { env: cliEnv(fixture) });
    try {
      await served.handshake();
      const sandbox = workspaceContext(fixture);
      const paths = [
        join(ws, 'hello.txt'),
        join(ws, 'new-file'),
        join(ws, 'sub', 'a.txt'),
        join(ws, '.git', 'HEAD'),
        join(ws, '.git', 'new'),
        join(ws, 'denied.txt'),
        join(ws, 'denied-dir', 'secret2.txt'),
        join(ws, 'link-out'),
        join(ws, 'dirlink-out', 'secret.txt'),
        join(ro, 'r.txt'),
        join(outside, 'secret.txt'),
        '/etc/hostname',
      ];
      const seen = new Set<string>();
      for (const path of paths) {
        const explained = (await served.request('fs/explainAccess', { path: uri(path), sandbox })).result as {
          access: string;
          reason: string;
          protected?: boolean;
        };
        seen.add(explained.access);
        const read = await served.request('fs/readFile', { path: uri(path), sandbox });
        const written = await served.request('fs/writeFile', {
          path: uri(path),
          dataBase64: 'eA==',
          sandbox,
        });
        const readOk = read.error === undefined || read.error.data.errorKind === 'not_found';
        const where = `${path}: ${explained.access} (${explained.reason})`;
        expect(written.error === undefined, where).toBe(explained.access === 'write');
        if (explained.access === 'none') expect(read.error?.data.errorKind, where).not.toBeUndefined();
        else expect(readOk, where).toBe(true);
      }
      expect([...seen].sort()).toEqual(['none', 'read', 'write']);
      const git = (
        await served.request('fs/explainAccess', { path: uri(join(ws, '.git', 'config')), sandbox })
      ).result;
      expect(git).toMatchObject({ access: 'read', protected: true, entry: `${uri(ws)}:write` });
      const denied = (
        await served.request('fs/explainAccess', { path: uri(join(ws, 'denied.txt')), sandbox })
      ).result;
      expect(denied).toMatchObject({ access: 'none', entry: `${uri(join(ws, 'denied.txt'))}:deny` });
      const bad = await served.request('fs/explainAccess', { path: 'relative', sandbox });
      expect(bad.error?.data.errorKind).toBe('invalid_params');
    } finally {
      await served.stop();
    }
  });

  it('fs-sandbox why says it in people’s words, and --json gives the wire result', async () => {
    const words = await cli(['why', '.git/HEAD']);
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout).toContain('.git/HEAD can be read, not written: protected metadata path .git');
    expect(words.stdout).toContain('it is protected');
    const json = await cli(['why', '--json', 'hello.txt']);
    expect(JSON.parse(json.stdout)).toMatchObject({ access: 'write' });
  });
});

describe('trust gate', () => {
  it('serve --untrusted refuses every write-class method before a helper runs; reads still work', async () => {
    const { ws } = fixture;
    const before = await snapshotTree(fixture.base);
    const served = ServeProcess.start(['--untrusted'], { env: cliEnv(fixture) });
    try {
      await served.handshake();
      const sandbox = workspaceContext(fixture);
      const refused = [
        ['fs/writeFile', { path: uri(join(ws, 'w')), dataBase64: 'eA==' }],
        ['fs/createDirectory', { path: uri(join(ws, 'd')) }],
        ['fs/remove', { path: uri(join(ws, 'hello.txt')) }],
        [
          'fs/copy',
          { sourcePath: uri(join(ws, 'hello.txt')), destinationPath: uri(join(ws, 'c')), recursive: false },
        ],
        ['fs/rename', { sourcePath: uri(join(ws, 'hello.txt')), destinationPath: uri(join(ws, 'r')) }],
        ['fs/edit', { path: uri(join(ws, 'hello.txt')), edits: [{ oldText: 'hello', newText: 'bye' }] }],
        // Its own path param (`cwd`) is only read; the files it changes are inside the patch.
        [
          'fs/applyPatch',
          { cwd: uri(ws), patch: '*** Begin Patch\n*** Add File: p.txt\n+planted\n*** End Patch\n' },
        ],
        [
          'fs/batch',
          {
            operations: [
              { method: 'fs/readFile', params: { path: uri(join(ws, 'hello.txt')) } },
              { method: 'fs/writeFile', params: { path: uri(join(ws, 'w')), dataBase64: 'eA==' } },
            ],
          },
        ],
      ] as const;
      for (const [method, params] of refused) {
        const reply = await served.request(method, { ...params, sandbox });
        expect(reply.error, method).toMatchObject({
          code: -32600,
          data: { errorKind: 'untrusted_workspace' },
        });
      }
      const read = await served.request('fs/readFile', { path: uri(join(ws, 'hello.txt')), sandbox });
      expect(Buffer.from(read.result?.dataBase64 as string, 'base64').toString()).toBe('hello sandbox\n');
      const reads = await served.request('fs/batch', {
        operations: [{ method: 'fs/getMetadata', params: { path: uri(join(ws, 'hello.txt')) } }],
        sandbox,
      });
      expect(reads.result?.results).toMatchObject([{ result: { isFile: true } }]);
      const explained = await served.request('fs/explainAccess', {
        path: uri(join(ws, 'hello.txt')),
        sandbox,
      });
      expect(explained.result).toMatchObject({ access: 'read' });
    } finally {
      await served.stop();
    }
    const cliRefusal = await callMethod(
      'fs/remove',
      { path: uri(join(ws, 'hello.txt')), sandbox: workspaceContext(fixture) },
      { user: 'root', env: cliEnv(fixture), untrusted: true },
    );
    expect(cliRefusal.error?.data.errorKind).toBe('untrusted_workspace');
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });
});
