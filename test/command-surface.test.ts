import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NO_USER_NAMESPACES, NOBODY_UID, runCli, USERS } from './support/cli.js';

/**
 * What a command (`fs-sandbox run`, which shares its launch with process/start, app-server's
 * process/spawn and the library's run/spawn) may leave on the host, tried as an attacker would, as
 * root and as nobody: renaming the parent of a denied or read-only path so that the next command's
 * mask misses it; a new repository, `.codex` or `.agents`; a changed config, hook or hooks
 * directory of an existing repository, nested or not. Meanwhile `git add` and `git commit` inside a
 * command land in the host's repository, and the host's own git, run after each command, runs
 * nothing planted (a payload would touch a marker file).
 *
 * Without user namespaces (e2e-landlock) the carving of docs/security.md "Landlock backend"
 * replaces the read-only binds: a directory holding a denied or read-only path (a repository's
 * `.git` with its config, a workspace root with its `.git`) takes no new entry from a command, and
 * a command's git cannot write a repository. Those cases are asserted as that page says; the
 * sweep at exit is tried where a command may create (`src/`, a directory with nothing carved).
 */

/** Where a command may make new entries: the workspace root under bwrap, a plain subdirectory under Landlock. */
const FREE = NO_USER_NAMESPACES ? 'src/' : '';
/** What Landlock answers a command's write in a carved directory. */
const CARVED = /Permission denied/;

const env = { PATH: '/usr/bin:/bin' };
let base: string;

beforeAll(() => {
  ensureBuilt();
  base = mkdtempSync('/tmp/fs-sandbox-command-surface-');
  chmodSync(base, 0o755);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

function workspace(user: CliUser, name: string, files: Record<string, string>): string {
  const ws = join(base, `${user}-${name}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), text);
  }
  if (user === 'nobody') execFileSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, ws]);
  return ws;
}

const sh = (user: CliUser, ws: string, script: string, flags: string[] = []) =>
  runCli(['run', ...flags, '--', '/bin/sh', '-c', script], { user, env, cwd: ws, timeoutMs: 60_000 });

const IDENTITY = [
  'GIT_AUTHOR_NAME=agent',
  'GIT_AUTHOR_EMAIL=agent@example.com',
  'GIT_COMMITTER_NAME=agent',
  'GIT_COMMITTER_EMAIL=agent@example.com',
];
const GIT_ENV = IDENTITY.flatMap((pair) => ['--env', pair]);

/** As the workspace's owner: root, or nobody through setpriv. */
function as(user: CliUser, file: string, args: string[], cwd: string): string {
  const hostEnv = {
    PATH: '/usr/bin:/bin',
    HOME: join(base, 'home'),
    GIT_CONFIG_NOSYSTEM: '1',
    ...Object.fromEntries(IDENTITY.map((pair) => pair.split('=') as [string, string])),
  };
  const [command, argv] =
    user === 'root'
      ? [file, args]
      : ['setpriv', [`--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups', file, ...args]];
  return execFileSync(command, argv, { cwd, env: hostEnv, stdio: 'pipe' }).toString();
}

/** The host's own git where an IDE would run it: status, then a commit (which runs the hooks). */
function hostGitRunsNothing(user: CliUser, repository: string, marker: string): void {
  as(user, 'git', ['status', '--short'], repository);
  try {
    as(user, 'git', ['commit', '-q', '--allow-empty', '-m', 'host commit'], repository);
  } catch {
    // A directory that is no repository of its own: git walks up; what matters is the marker.
  }
  expect(existsSync(marker)).toBe(false);
}

function payload(marker: string): string {
  return `[core]\n\tfsmonitor = "touch ${marker}; false"\n\tpager = "touch ${marker}; cat"\n`;
}

describe.each(USERS)('as %s', (user: CliUser) => {
  it("a denied file's parents cannot be renamed, so the next command's mask still covers it", async () => {
    const ws = workspace(user, 'rename-deny', { 'secret/key.txt': 'KEY-1', 'a/b/deep.txt': 'KEY-2' });
    const flags = ['--deny', join(ws, 'secret/key.txt'), '--deny', join(ws, 'a/b/deep.txt')];
    const moved = await sh(user, ws, 'mv secret s2; mv a x; mv a/b a/c; echo moved', flags);
    expect(moved.stdout).toContain('moved');
    // bwrap binds each parent onto itself; Landlock carves it (no rename, no new entry).
    expect(moved.stderr).toMatch(NO_USER_NAMESPACES ? CARVED : /busy/i);
    // Everything stays where the policy names it; the next command reads none of it.
    expect(readFileSync(join(ws, 'secret/key.txt'), 'utf8')).toBe('KEY-1');
    expect(readFileSync(join(ws, 'a/b/deep.txt'), 'utf8')).toBe('KEY-2');
    for (const gone of ['s2', 'x', 'a/c']) expect(existsSync(join(ws, gone))).toBe(false);
    const read = await sh(
      user,
      ws,
      'cat secret/key.txt s2/key.txt a/b/deep.txt x/b/deep.txt a/c/deep.txt',
      flags,
    );
    expect(read.stdout).not.toMatch(/KEY-/);
    // A variant: the parent copied then removed (a copy is a new file, the removal fails: busy).
    const copied = await sh(user, ws, 'cp -r secret s3; rm -rf secret; cat s3/key.txt; echo done', flags);
    expect(copied.stdout).not.toMatch(/KEY-/);
    expect(readFileSync(join(ws, 'secret/key.txt'), 'utf8')).toBe('KEY-1');
    // Files beside the mask stay writable (under Landlock a new one cannot be made beside it).
    const beside = await sh(
      user,
      ws,
      'echo new > secret/other.txt && mv secret/other.txt secret/o2 && cat secret/o2',
      flags,
    );
    if (NO_USER_NAMESPACES) {
      expect(beside.stderr).toMatch(CARVED);
      expect(existsSync(join(ws, 'secret/other.txt'))).toBe(false);
    } else expect(beside.stdout.trim()).toBe('new');
  });

  it("a read-only entry's parents cannot be renamed, so it stays read-only for the next command", async () => {
    const ws = workspace(user, 'rename-read-only', { 'cfg/locked/settings.json': '{"safe":true}' });
    const entry = (path: string, access: string) => ({
      path: { type: 'path', path: `file://${path}` },
      access,
    });
    const context = {
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [
            { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
            entry(ws, 'write'),
            entry(join(ws, 'cfg/locked'), 'read'),
          ],
        },
        network: 'restricted',
      },
      cwd: `file://${ws}`,
    };
    const flags = ['--sandbox', JSON.stringify(context)];
    const moved = await sh(user, ws, 'mv cfg c2; echo moved', flags);
    expect(moved.stdout).toContain('moved');
    const write = await sh(
      user,
      ws,
      'echo owned > c2/locked/settings.json; echo owned > cfg/locked/settings.json',
      flags,
    );
    expect(write.code).not.toBe(0);
    expect(readFileSync(join(ws, 'cfg/locked/settings.json'), 'utf8')).toBe('{"safe":true}');
  });

  describe('git', () => {
    let ws: string;
    let marker: string;

    beforeAll(() => {
      ws = workspace(user, 'git', {
        'src/app.ts': 'one\n',
        'vendor/lib/lib.c': 'int x;\n',
        'tool/x.txt': 'x\n',
        'docs/readme.md': 'docs\n',
      });
      marker = join(base, `${user}-marker`);
      for (const repo of ['', 'vendor/lib', 'tool'])
        as(user, 'git', ['init', '-q', '-b', 'main'], join(ws, repo));
      as(user, 'git', ['config', 'core.hooksPath', '.husky'], join(ws, 'tool'));
      as(user, 'mkdir', ['-p', join(ws, 'tool/.husky')], ws);
      // Nested ones first: the workspace's repository then records them as gitlinks.
      for (const repo of ['tool', 'vendor/lib', '']) {
        as(user, 'git', ['add', '-A'], join(ws, repo));
        as(user, 'git', ['commit', '-q', '-m', 'host'], join(ws, repo));
      }
      if (user === 'nobody') mkdirSync(join(base, 'home'), { recursive: true });
    });

    it('git add and git commit inside a command, from a subdirectory, land in the host repository', async () => {
      if (NO_USER_NAMESPACES) {
        // git makes index.lock directly in .git, whose config is read-only: Landlock refuses it.
        for (const [repo, file] of [
          ['', 'src/app.ts'],
          ['vendor/lib', 'lib.c'],
        ] as const) {
          const tried = await sh(
            user,
            ws,
            `cd ./${repo} && echo two >> ${file} && git commit -q -am "from the sandbox" && echo COMMITTED`,
            GIT_ENV,
          );
          expect(tried.stdout).not.toContain('COMMITTED');
          expect(tried.stderr).toMatch(/index\.lock': Permission denied/);
          expect(as(user, 'git', ['log', '-1', '--format=%s'], join(ws, repo)).trim()).toBe('host');
          as(user, 'git', ['checkout', '-q', '--', file], join(ws, repo));
        }
        return;
      }
      const done = await sh(
        user,
        ws,
        'cd src && echo two >> app.ts && git add app.ts && git commit -q -m "from the sandbox" && git status --short && echo COMMITTED',
        GIT_ENV,
      );
      expect(done.stderr).toBe('');
      expect(done.stdout).toContain('COMMITTED');
      expect(as(user, 'git', ['log', '-1', '--format=%s %an'], ws).trim()).toBe('from the sandbox agent');
      expect(as(user, 'git', ['status', '--short'], ws)).toBe('');
      expect(as(user, 'git', ['fsck', '--no-progress'], ws)).toBe('');
      // A nested repository commits too, from its own subdirectory.
      const nested = await sh(
        user,
        ws,
        'cd vendor/lib && echo y >> lib.c && git commit -q -am nested && echo OK',
        GIT_ENV,
      );
      expect(nested.stdout).toContain('OK');
      expect(as(user, 'git', ['log', '-1', '--format=%s'], join(ws, 'vendor/lib')).trim()).toBe('nested');
    });

    it("a repository's config, hooks and hooks directory cannot be changed, at any depth, and what a command adds is removed", async () => {
      const script = [
        `git config core.fsmonitor "touch ${marker}; false"`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/pre-commit`,
        `printf '%s' '${payload(marker)}' >> vendor/lib/.git/config`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > vendor/lib/.git/hooks/pre-commit`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > tool/.husky/pre-commit`,
        `mkdir evil && printf '%s' '${payload(marker)}' > evil/config && echo ../../evil > .git/commondir`,
        'mv vendor/lib/.git vendor/lib/stash',
        'echo tried',
      ].join('; ');
      const done = await sh(user, ws, script);
      expect(done.stdout).toContain('tried');
      // Under Landlock .git takes no new entry, so there is no commondir to remove.
      expect(done.stderr).toMatch(NO_USER_NAMESPACES ? CARVED : /removed .*\.git\/commondir/);
      for (const path of [
        '.git/hooks/pre-commit',
        'vendor/lib/.git/hooks/pre-commit',
        'tool/.husky/pre-commit',
        '.git/commondir',
        'vendor/lib/stash',
      ])
        expect(existsSync(join(ws, path))).toBe(false);
      expect(readFileSync(join(ws, '.git/config'), 'utf8')).not.toContain('fsmonitor');
      expect(readFileSync(join(ws, 'vendor/lib/.git/config'), 'utf8')).not.toContain('fsmonitor');
      for (const repo of ['', 'vendor/lib', 'tool']) hostGitRunsNothing(user, join(ws, repo), marker);
    });

    it('a new repository, .codex and .agents a command makes do not remain (git init, a gitfile, a bare layout)', async () => {
      const script = [
        `cd ./${FREE}`,
        'git init -q sub',
        `printf '%s' '${payload(marker)}' >> sub/.git/config`,
        'git init -q --bare stash',
        `printf '%s' '${payload(marker)}' >> stash/config`,
        'mkdir wt && echo "gitdir: ../stash" > wt/.git',
        'mkdir -p .codex deep/er/.agents/skills && echo "model = 1" > .codex/config.toml && echo x > deep/er/.agents/skills/s.md',
        'echo made',
      ].join(' && ');
      const done = await sh(user, ws, script);
      expect(done.stdout).toContain('made');
      for (const path of ['sub/.git', 'stash', 'wt/.git', '.codex', 'deep/er/.agents']) {
        expect(existsSync(join(ws, FREE, path))).toBe(false);
        expect(done.stderr).toContain(`removed ${join(ws, FREE, path)}, which the command made`);
      }
      // What is not surface stays: the directories the command made around them.
      for (const path of ['sub', 'wt', 'deep/er']) expect(existsSync(join(ws, FREE, path))).toBe(true);
      for (const repo of ['sub', 'wt', '']) hostGitRunsNothing(user, join(ws, FREE, repo), marker);
      if (NO_USER_NAMESPACES) {
        // At the workspace root (carved: it holds .git) nothing new can be made at all.
        const root = await sh(user, ws, 'git init -q sub2 || mkdir .codex || echo refused');
        expect(root.stdout).toContain('refused');
        for (const path of ['sub2', '.codex']) expect(existsSync(join(ws, path))).toBe(false);
      }
    });

    it("a policy file's allow_nested_repositories keeps a new repository there, without its config and hooks", async () => {
      const policy = join(base, `${user}-policy.toml`);
      // Under Landlock vendor/ is carved (it holds vendor/lib/.git): the allowed place is src/.
      const nested = NO_USER_NAMESPACES ? 'src' : 'vendor';
      writeFileSync(
        policy,
        `[profiles.agent]\nwritable_roots = [${JSON.stringify(ws)}]\nallow_nested_repositories = [${JSON.stringify(join(ws, nested))}]\n`,
      );
      const allow = ['--policy', policy, '--profile', 'agent'];
      const script = [
        `git init -q ${nested}/new`,
        `printf '%s' '${payload(marker)}' >> ${nested}/new/.git/config`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${nested}/new/.git/hooks/pre-commit`,
        `cd ${nested}/new && echo n > n.txt && git add n.txt && git commit -q -m first && echo MADE`,
      ].join(' && ');
      const done = await sh(user, ws, script, [...GIT_ENV, ...allow]);
      expect(done.stdout).toContain('MADE');
      expect(done.stderr).toContain(`kept the new repository ${join(ws, nested, 'new/.git')}`);
      for (const gone of ['config', 'hooks', 'info'])
        expect(existsSync(join(ws, nested, 'new/.git', gone))).toBe(false);
      expect(as(user, 'git', ['log', '-1', '--format=%s'], join(ws, nested, 'new')).trim()).toBe('first');
      hostGitRunsNothing(user, join(ws, nested, 'new'), marker);
      // Elsewhere the same is still refused.
      const elsewhere = NO_USER_NAMESPACES ? 'docs/other' : 'other';
      const outside = await sh(user, ws, `git init -q ${elsewhere} && echo MADE`, allow);
      expect(outside.stderr).toContain(`removed ${join(ws, elsewhere, '.git')}`);
    });

    it('a benign command leaves only what it wrote, and sees a file the host replaces while it runs', async () => {
      const listing = () =>
        as(user, 'find', ['.', '-path', './.git/objects', '-prune', '-o', '-print'], ws).split('\n').sort();
      const before = listing();
      writeFileSync(join(ws, 'src/live.txt'), 'old\n');
      if (user === 'nobody') execFileSync('chown', [`${NOBODY_UID}:${NOBODY_UID}`, join(ws, 'src/live.txt')]);
      const running = sh(
        user,
        ws,
        'cd src && git status --short >/dev/null && echo out > made.txt; while [ ! -e go ]; do sleep 0.1; done; cat live.txt',
      );
      // The host replaces the file (a new inode, as an editor saves it) while the command waits.
      const deadline = Date.now() + 30_000;
      while (!existsSync(join(ws, 'src/made.txt')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      writeFileSync(join(ws, 'src/live.new'), 'new\n');
      execFileSync('mv', [join(ws, 'src/live.new'), join(ws, 'src/live.txt')]);
      writeFileSync(join(ws, 'src/go'), '');
      const done = await running;
      expect(done.stdout.trim()).toBe('new');
      expect(done.stderr).toBe('');
      const added = listing().filter((line) => !before.includes(line));
      expect(added.sort()).toEqual(['./src/go', './src/live.txt', './src/made.txt']);
    });
  });
});
