import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, callMethod, NOBODY_UID, runCli, USERS } from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { HELPER_RUNTIMES } from './support/helper-runtimes.js';
import { diffTrees, snapshotTree } from './support/tree-snapshot.js';

/**
 * The Landlock backend as a new user meets it where bwrap cannot make its namespaces: every CLI
 * here starts in a user namespace of its own whose limit of user namespaces is 0 (as in a
 * container that refuses them), as root and as nobody. `auto` must then say "landlock" and why,
 * run reads, writes and commands in the workspace, and refuse everything outside it by the
 * kernel (pre-check off), including signals and ptrace to a host process of the same user.
 */

beforeAll(() => {
  ensureBuilt();
});

describe.each(USERS)('without user namespaces, as %s', (user: CliUser) => {
  let fixture: Fixture;
  const cli = (args: string[], extra: { input?: string } = {}) =>
    runCli(args, {
      user,
      env: cliEnv(fixture),
      cwd: fixture.ws,
      userNamespaces: false,
      timeoutMs: 60_000,
      ...extra,
    });
  const call = (method: string, params: Record<string, unknown>, precheck = false) =>
    callMethod(
      method,
      { ...params, sandbox: (params.sandbox as object | undefined) ?? workspaceContext(fixture) },
      { user, env: cliEnv(fixture), precheck, userNamespaces: false, timeoutMs: 60_000 },
    );

  beforeEach(async () => {
    fixture = await createFixture(user);
  });
  afterEach(async () => {
    await removeFixture(fixture);
  });

  it('doctor names landlock and why bwrap was not used, and passes', async () => {
    const run = await cli(['doctor']);
    expect(run.stdout).toMatch(/backend +ok +landlock: Landlock ABI \d+, because bwrap could not make its/);
    expect(run.stdout).toMatch(/sandboxed operation +ok +write \+ read under landlock/);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  it('reads, writes and runs commands in the workspace; the host sees exactly those writes', async () => {
    const read = await cli(['cat', 'hello.txt']);
    expect([read.stdout, read.code]).toEqual(['hello sandbox\n', 0]);
    const write = await cli(['write', 'sub/new.txt', 'made by the helper\n']);
    expect(write.code, write.stderr).toBe(0);
    const command = await cli([
      'run',
      '--',
      '/bin/sh',
      '-c',
      'cat hello.txt && echo made by a command > sub/cmd.txt && cat sub/new.txt',
    ]);
    expect([command.stdout, command.code], command.stderr).toEqual([
      'hello sandbox\nmade by the helper\n',
      0,
    ]);
    expect(await readFile(join(fixture.ws, 'sub', 'cmd.txt'), 'utf8')).toBe('made by a command\n');
    // explain says which backend and what it cannot do.
    const explain = await cli(['explain']);
    expect(explain.stdout).toMatch(/The helper runs under landlock \(linux; Landlock ABI \d+, because bwrap/);
    expect(explain.stdout).toContain('no private /proc');
  });

  it.each(HELPER_RUNTIMES)(
    'the %s helper writes beside denied paths (the workspace root) and reads back, with nothing but the context granted',
    async (runtime) => {
      // workspaceContext grants the workspace and `ro` only (no /etc: node's OpenSSL configuration
      // is not readable), and denies a file and a directory at the workspace root, which Landlock
      // carves: every helper write there makes its staging file beside the denied ones.
      const env = { ...cliEnv(fixture), FS_SANDBOX_HELPER_RUNTIME: runtime };
      const options = { user, env, precheck: false, userNamespaces: false, timeoutMs: 60_000 };
      const context = workspaceContext(fixture);
      const text = (value: string) => Buffer.from(value).toString('base64');
      for (const [name, content] of [
        ['hello.txt', 'replaced at the root\n'],
        ['new-at-root.txt', 'made at the root\n'],
      ]) {
        const path = uri(join(fixture.ws, name as string));
        const write = await callMethod(
          'fs/writeFile',
          { path, dataBase64: text(content as string), sandbox: context },
          options,
        );
        expect(write.code, JSON.stringify(write.error)).toBe(0);
        const read = await callMethod('fs/readFile', { path, sandbox: context }, options);
        expect(read.result?.dataBase64, JSON.stringify(read.error)).toBe(text(content as string));
      }
      // The denied file stays closed to the same helper, by its guard and by the kernel.
      const denied = await callMethod(
        'fs/readFile',
        { path: uri(join(fixture.ws, 'denied.txt')), sandbox: context },
        options,
      );
      expect(denied.error?.data.errorKind).toBe('permission_denied');
      expect(await readFile(join(fixture.ws, 'denied.txt'), 'utf8')).toBe('denied file content\n');
      expect((await readdir(fixture.ws)).filter((name) => name.startsWith('.fs-sandbox-'))).toEqual([]);
    },
  );

  it('refuses by the kernel (pre-check off): writes outside, denied and outside reads, links out', async () => {
    const before = await snapshotTree(fixture.base);
    const refusals = [
      await call('fs/readFile', { path: uri(join(fixture.ws, 'denied.txt')) }),
      await call('fs/readFile', { path: uri(join(fixture.ws, 'denied-dir', 'secret2.txt')) }),
      await call('fs/readFile', { path: uri(join(fixture.outside, 'secret.txt')) }),
      await call('fs/readFile', { path: uri(join(fixture.ws, 'link-out')) }),
      await call('fs/writeFile', { path: uri(join(fixture.outside, 'evil.txt')), dataBase64: 'cHdu' }),
      await call('fs/writeFile', { path: uri(join(fixture.ws, '.git', 'HEAD')), dataBase64: 'cHdu' }),
    ];
    for (const outcome of refusals) {
      expect(outcome.code, JSON.stringify(outcome.error)).toBe(1);
      // .git/HEAD: the helper's guard refuses it by its physical location before the kernel would.
      expect(['permission_denied', 'protected_path']).toContain(outcome.error?.data.errorKind);
      expect(outcome.run.stdout + outcome.run.stderr).not.toContain('launch codes');
    }
    const command = await cli([
      'run',
      '--no-precheck',
      '--deny',
      'denied.txt',
      '--',
      '/bin/sh',
      '-c',
      `cat denied.txt; cat ${fixture.outside}/secret.txt; cat link-out; echo pwned > ${fixture.outside}/x; echo pwned > .git/hooks/pre-commit; echo pwned > /proc/self/root${fixture.outside}/y; true`,
    ]);
    expect(command.stdout + command.stderr).not.toContain('launch codes');
    expect(command.stdout + command.stderr).not.toContain('denied file content');
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });

  it("a command's git cannot write the repository at the workspace root: its .git is read-only (docs)", async () => {
    // Under bwrap only the repository's config, hooks and other non-data entries are bound
    // read-only, so git makes index.lock in .git and renames it over the index. Landlock cannot
    // grant that in a directory without granting the same to the config beside it (a command has
    // no guard), so the top-level .git is read-only (docs/security.md "Landlock backend").
    execFileSync('git', ['init', '-q', fixture.ws]);
    if (user === 'nobody')
      execFileSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, join(fixture.ws, '.git')]);
    const before = await snapshotTree(join(fixture.ws, '.git'));
    const identity = [
      'GIT_AUTHOR_NAME=a',
      'GIT_AUTHOR_EMAIL=a@example.com',
      'GIT_COMMITTER_NAME=a',
      'GIT_COMMITTER_EMAIL=a@example.com',
    ];
    const commit = await cli([
      'run',
      ...identity.flatMap((pair) => ['--env', pair]),
      '--',
      '/bin/sh',
      '-c',
      'git add hello.txt && git commit -qm agent',
    ]);
    expect(commit.code).not.toBe(0);
    expect(commit.stderr).toMatch(/index\.lock': Permission denied/);
    expect(diffTrees(before, await snapshotTree(join(fixture.ws, '.git')))).toEqual([]);
  });

  it('a command cannot signal or ptrace a host process of the same user, nor make a namespace or socket', async () => {
    const victim = startHostProcess(user);
    try {
      const pid = victim.pid as number;
      const command = await cli([
        'run',
        '--',
        '/bin/sh',
        '-c',
        [
          `kill -TERM ${pid} && echo SIGNALLED`,
          `kill -0 ${pid} && echo PROBED`,
          `cat /proc/${pid}/environ && echo PTRACE_READ`,
          `head -c1 /proc/${pid}/mem && echo PTRACE_MEM`,
          'unshare --user true && echo USERNS',
          'python3 -c "import socket; socket.socket(socket.AF_UNIX)" && echo UNIX_SOCKET',
          'python3 -c "import socket; socket.socket()" && echo INET_SOCKET',
          'true',
        ].join('; '),
      ]);
      expect(command.code, command.stderr).toBe(0);
      for (const marker of [
        'SIGNALLED',
        'PROBED',
        'PTRACE_READ',
        'PTRACE_MEM',
        'USERNS',
        'UNIX_SOCKET',
        'INET_SOCKET',
      ])
        expect(command.stdout, marker).not.toContain(marker);
      expect(command.stdout).not.toContain('VICTIM_SECRET');
      expect(victim.exitCode).toBeNull();
      expect(victim.signalCode).toBeNull();
    } finally {
      victim.kill('SIGKILL');
    }
  });

  it('fails closed where bwrap is required: requireBackend and --backend bwrap', async () => {
    const context = { ...workspaceContext(fixture), requireBackend: 'bwrap' };
    const required = await call(
      'fs/readFile',
      { path: uri(join(fixture.ws, 'hello.txt')), sandbox: context },
      true,
    );
    expect(required.error?.data.errorKind).toBe('sandbox_unavailable');
    expect(required.error?.message).toContain('requires the bwrap backend');
    // What needs a network namespace is refused, typed, rather than run with less.
    const relay = await cli(['run', '--allow-unix-socket', join(fixture.ro, 'agent.sock'), '--', 'true']);
    expect(relay.code, relay.stderr).toBe(125); // run's own failure, not the command's
    expect(relay.stderr).toContain('a unix socket relay (--allow-unix-socket) needs a network namespace');
    expect(relay.stderr).toContain('sandbox_unavailable');
    const forced = await cli(['cat', '--backend', 'bwrap', 'hello.txt']);
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain('sandbox_unavailable');
    expect(await readdir(fixture.tmp)).toEqual([]);
  });
});

/** A process of the test's user on the host (nobody through setpriv), with a secret in its environment. */
function startHostProcess(user: CliUser): ChildProcess {
  const argv = ['sleep', '120'];
  const command =
    user === 'root'
      ? argv
      : ['setpriv', `--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups', ...argv];
  return spawn(command[0] as string, command.slice(1), {
    env: { VICTIM_SECRET: 'VICTIM_SECRET_VALUE' },
    stdio: 'ignore',
  });
}
