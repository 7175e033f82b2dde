import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { type CliUser, runCli, USERS } from './support/cli.js';
import { cliEnv, createFixture, type Fixture, removeFixture, uri } from './support/fixture.js';
import { connectMcp, ourServer } from './support/mcp-client.js';
import { diffTrees, snapshotTree, type TreeSnapshot } from './support/tree-snapshot.js';

/**
 * A policy file (`fs-sandbox.toml`) with two profiles drives `cat`, `run`, `why`, `serve` and
 * `mcp` through the real CLI and bwrap, as root and as nobody (`mcp` as root: its client starts
 * the server itself): `dev` writes the workspace and denies `denied.txt` and `*.key`; `review`
 * reads the workspace and `ro` and writes nothing. Found with `--find-policy` from a directory
 * below the file, named with `--policy`; a typo is an error naming the file, the line and the key.
 * Nothing outside the workspace changes, and what each profile refuses is not on the disk after.
 */

const POLICY = `# the fixture's policy
default_profile = "dev"

[profiles.dev]
writable_roots = ["ws"]
deny = ["ws/denied.txt", "ws/**/*.key"]
protect = ["tasks.json"]

[profiles.review]
sandbox_mode = "read-only"
read_roots = ["ws", "ro"]
`;

/** A local user who is neither root nor nobody (the two users the CLI runs as here). */
const ANOTHER_UID = 12345;

beforeAll(() => {
  ensureBuilt();
});

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;
  let policy: string;
  let before: TreeSnapshot;
  const cli = (args: readonly string[], cwd = fixture.ws) =>
    runCli(args, { user, env: cliEnv(fixture), cwd, timeoutMs: 60_000 });

  beforeAll(async () => {
    fixture = await createFixture(user);
    policy = join(fixture.base, 'fs-sandbox.toml');
    await writeFile(policy, POLICY);
    await writeFile(join(fixture.ws, 'sub', 'id.key'), 'key material\n');
    before = await snapshotTree(fixture.outside);
  });

  afterAll(async () => {
    expect(diffTrees(before, await snapshotTree(fixture.outside))).toEqual([]);
    await removeFixture(fixture);
  });

  it('cat: the default profile reads the workspace, refuses its denies and what it does not grant', async () => {
    const read = await cli(['cat', '--policy', policy, 'hello.txt']);
    expect(read.stderr).toBe('');
    expect(read.stdout).toBe('hello sandbox\n');
    for (const path of [
      'denied.txt',
      'sub/id.key',
      join(fixture.ro, 'r.txt'),
      join(fixture.outside, 'secret.txt'),
    ]) {
      const refused = await cli(['cat', '--policy', policy, '--profile', 'dev', path]);
      expect(refused.code, path).toBe(1);
      expect(refused.stderr, path).toMatch(/\[permission_denied\]\n$/);
      expect(refused.stdout).toBe('');
    }
    // review reads ro, found from a directory below the file.
    const review = await cli(
      ['cat', '--find-policy', '--profile', 'review', join(fixture.ro, 'r.txt')],
      join(fixture.ws, 'sub'),
    );
    expect(review.stdout).toBe('read only\n');
  });

  it('run: a command writes under dev, not under review; denies and protected names hold', async () => {
    const made = await cli([
      'run',
      '--find-policy',
      '--',
      'sh',
      '-c',
      'echo made > made.txt; cat denied.txt',
    ]);
    expect(made.code).toBe(1);
    expect(made.stdout).toBe('');
    expect(await readFile(join(fixture.ws, 'made.txt'), 'utf8')).toBe('made\n');
    const refused = await cli([
      'run',
      '--policy',
      policy,
      '--profile',
      'review',
      '--',
      'sh',
      '-c',
      'cat hello.txt; echo x > review.txt',
    ]);
    expect(refused.stdout).toBe('hello sandbox\n');
    expect(refused.code).not.toBe(0);
    expect(existsSync(join(fixture.ws, 'review.txt'))).toBe(false);
    // The profile's protected name: created by no sandboxed write, at any depth.
    const write = await cli(['write', '--find-policy', 'sub/tasks.json', '{}']);
    expect(write.stderr).toMatch(/protected.*\[protected_path\]\n$|\[permission_denied\]\n$/);
    expect(existsSync(join(fixture.ws, 'sub', 'tasks.json'))).toBe(false);
  });

  it('flags add to the profile and win: --read-root widens it, --deny narrows it', async () => {
    const wider = await cli(['cat', '--find-policy', '--read-root', fixture.ro, join(fixture.ro, 'r.txt')]);
    expect(wider.stdout).toBe('read only\n');
    const narrower = await cli([
      'cat',
      '--find-policy',
      '--profile',
      'review',
      '--deny',
      'hello.txt',
      'hello.txt',
    ]);
    expect(narrower.code).toBe(1);
    expect(narrower.stderr).toMatch(/\[permission_denied\]\n$/);
  });

  it('why: the file, line and key of the entry that decided', async () => {
    const why = await cli(['why', '--find-policy', 'denied.txt']);
    expect(why.stdout).toContain(
      `decided by the policy entry ${uri(join(fixture.ws, 'denied.txt'))}:deny, written in ${policy} line 6 (profiles.dev.deny[0])`,
    );
    expect(why.stdout).toContain(`the sandbox is profile dev of ${policy}`);
    const json = await cli(['why', '--json', '--policy', policy, '--profile', 'review', 'hello.txt']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      access: 'read',
      entry: `${uri(fixture.ws)}:read`,
      policySource: { file: policy, line: 11, key: 'profiles.review.read_roots[0]' },
    });
  });

  it('a typo is an error naming the file, the line and the key, and nothing runs', async () => {
    const typo = join(fixture.base, 'typo.toml');
    await writeFile(typo, '[profiles.dev]\nwritable_roots = ["ws"]\nwriteable_roots = ["outside"]\n');
    for (const verb of [
      ['cat', 'hello.txt'],
      ['run', '--', 'sh', '-c', 'echo x > typo.txt'],
    ]) {
      const run = await cli([verb[0] as string, '--policy', typo, '--profile', 'dev', ...verb.slice(1)]);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`${typo}:3: profiles.dev.writeable_roots: unknown key`);
      expect(run.stderr).toMatch(/\[invalid_params\]\n$/);
    }
    expect(existsSync(join(fixture.ws, 'typo.txt'))).toBe(false);
  });

  it('--find-policy refuses a file another user owns (a shared directory above the cwd), and nothing runs', async () => {
    // A world-writable parent, as /tmp is: another local user puts an fs-sandbox.toml there that
    // would make the whole outside directory writable.
    const shared = join(fixture.base, 'shared');
    const project = join(shared, 'project');
    await mkdir(project, { recursive: true });
    await chmod(shared, 0o1777);
    const planted = join(shared, 'fs-sandbox.toml');
    await writeFile(planted, `[profiles.wide]\nwritable_roots = [${JSON.stringify(fixture.outside)}]\n`);
    await chown(planted, ANOTHER_UID, ANOTHER_UID);
    const target = join(fixture.outside, 'planted.txt');
    const run = await cli(
      ['run', '--find-policy', '--profile', 'wide', '--', 'sh', '-c', `echo x > ${target}`],
      project,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^fs-sandbox: --find-policy: ${planted} belongs to uid ${ANOTHER_UID}, not to you .*--policy`,
      ),
    );
    expect(existsSync(target)).toBe(false);
    // Root under sudo takes the invoking user's file, as git does (SUDO_UID); anyone else does not.
    const bySudo = await runCli(['why', '--find-policy', '--profile', 'wide', target], {
      user,
      env: cliEnv(fixture, { SUDO_UID: String(ANOTHER_UID) }),
      cwd: project,
      timeoutMs: 60_000,
    });
    if (user === 'root') expect(bySudo.stdout, bySudo.stderr).toContain('can be read and written');
    else expect(bySudo.stderr).toContain(`belongs to uid ${ANOTHER_UID}`);
    // Named with --policy, the user chose it: it is read.
    const named = await cli(['why', '--policy', planted, '--profile', 'wide', target], project);
    expect(named.stdout).toContain('can be read and written');
    await rm(shared, { recursive: true, force: true });
  });

  it('serve: a request without a sandbox runs under the profile', async () => {
    const serve = ServeProcess.start(['--policy', policy, '--profile', 'review', '--require-sandbox'], {
      user,
      env: cliEnv(fixture),
      cwd: fixture.ws,
    });
    try {
      await serve.request('initialize', { clientName: 'codex-environment' });
      serve.notify('initialized');
      const read = await serve.request('fs/readFile', {
        path: uri(join(fixture.ro, 'r.txt')),
        sandbox: null,
      });
      expect(Buffer.from(read.result?.dataBase64 as string, 'base64').toString()).toBe('read only\n');
      const write = await serve.request('fs/writeFile', {
        path: uri(join(fixture.ws, 'served.txt')),
        dataBase64: Buffer.from('x').toString('base64'),
      });
      expect(write.error?.data.errorKind, JSON.stringify(write)).toBe('permission_denied');
      const secret = await serve.request('fs/readFile', { path: uri(join(fixture.outside, 'secret.txt')) });
      expect(secret.error?.data.errorKind, JSON.stringify(secret)).toBe('permission_denied');
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(existsSync(join(fixture.ws, 'served.txt'))).toBe(false);
  });

  it('a profile that protects its own file: no sandboxed command or write changes it', async () => {
    const own = join(fixture.ws, 'fs-sandbox.toml');
    const text = '[profiles.self]\nwritable_roots = ["."]\nprotect = ["fs-sandbox.toml"]\n';
    await writeFile(own, text);
    try {
      const run = await cli([
        'run',
        '--find-policy',
        '--profile',
        'self',
        '--',
        'sh',
        '-c',
        'echo "[profiles.x]" >> fs-sandbox.toml',
      ]);
      expect(run.code).not.toBe(0);
      const write = await cli(['write', '--find-policy', '--profile', 'self', 'fs-sandbox.toml', 'x']);
      expect(write.stderr).toMatch(/\[protected_path\]\n$/);
      expect(await readFile(own, 'utf8')).toBe(text);
    } finally {
      await rm(own);
    }
  });

  // The MCP client starts the server as this process: as root only.
  if (user === 'root')
    it('mcp: the profile gives the allowed directories, its denies and read-only mode', async () => {
      await mkdir(join(fixture.ws, 'mcp'), { recursive: true });
      const dev = await connectMcp(ourServer(['--policy', policy, '--profile', 'dev']));
      try {
        const read = await dev.call('read_text_file', { path: join(fixture.ws, 'hello.txt') });
        expect(read).toMatchObject({ text: 'hello sandbox\n', isError: false });
        const denied = await dev.call('read_text_file', { path: join(fixture.ws, 'denied.txt') });
        expect(denied.isError).toBe(true);
        const written = await dev.call('write_file', {
          path: join(fixture.ws, 'mcp', 'dev.txt'),
          content: 'dev\n',
        });
        expect(written.isError, written.text).toBe(false);
      } finally {
        await dev.close();
      }
      expect(await readFile(join(fixture.ws, 'mcp', 'dev.txt'), 'utf8')).toBe('dev\n');
      const review = await connectMcp(ourServer(['--policy', policy, '--profile', 'review']));
      try {
        const listed = await review.call('list_allowed_directories');
        expect(listed.text).toContain(fixture.ro);
        const written = await review.call('write_file', {
          path: join(fixture.ws, 'mcp', 'review.txt'),
          content: 'x',
        });
        expect(written.isError).toBe(true);
      } finally {
        await review.close();
      }
      expect(existsSync(join(fixture.ws, 'mcp', 'review.txt'))).toBe(false);
    });
});
