import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServeProcess } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NOBODY_UID, runCli, USERS, withHelperRuntime } from './support/cli.js';
import { connectMcp, ourServer } from './support/mcp-client.js';

/**
 * Nothing an agent writes through a file method becomes code the host runs: `.git` (directory or
 * gitfile), `.codex` and `.agents` at any depth, an existing nested repository's config and hooks,
 * a gitfile's target, the directory a repository's core.hooksPath names, and a write completing a
 * git directory's layout are refused (`protected_path`) for every write path — through `serve`
 * with the pre-check off (the helper alone enforces), the CLI, and the MCP server — as root and as
 * nobody. Then the host's own `git status` and `git commit` run in every affected repository, and
 * a marker file that any planted payload would touch must not exist.
 */

interface Workspace {
  base: string;
  ws: string;
  marker: string;
  env: Record<string, string>;
}

const run = (
  user: CliUser,
  file: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
) =>
  user === 'root'
    ? execFileSync(file, args, { ...options, stdio: 'pipe' })
    : execFileSync(
        'setpriv',
        [`--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups', file, ...args],
        { ...options, stdio: 'pipe' },
      );

function gitEnv(base: string): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    HOME: join(base, 'home'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'host',
    GIT_AUTHOR_EMAIL: 'host@example.com',
    GIT_COMMITTER_NAME: 'host',
    GIT_COMMITTER_EMAIL: 'host@example.com',
  };
}

/** The host's own git, as the workspace's owner would run it. */
function hostGit(user: CliUser, workspace: Workspace, cwd: string, ...args: string[]): void {
  run(user, 'git', args, { cwd, env: gitEnv(workspace.base) });
}

function buildWorkspace(user: CliUser): Workspace {
  const base = mkdtempSync('/tmp/fs-sandbox-surface-');
  chmodSync(base, 0o755);
  const ws = join(base, 'ws');
  const marker = join(base, 'marker');
  for (const dir of [
    'home',
    'ws/sub',
    'ws/vendor/lib',
    'ws/app/.husky',
    'ws/wt',
    'ws/half/objects',
    'ws/half/refs',
    'ws/src/inner',
    'ws/planted/hooks',
    'ws/a',
  ])
    mkdirSync(join(base, dir), { recursive: true });
  if (user === 'nobody') execFileSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, base]);
  const workspace: Workspace = {
    base,
    ws,
    marker,
    env: withHelperRuntime({ PATH: '/usr/local/bin:/usr/bin:/bin', TMPDIR: join(base, 'home') }),
  };
  for (const repo of ['', 'vendor/lib', 'app'])
    hostGit(user, workspace, join(ws, repo), 'init', '-q', '-b', 'main');
  hostGit(user, workspace, join(ws, 'app'), 'config', 'core.hooksPath', '.husky');
  hostGit(
    user,
    workspace,
    join(ws, 'wt'),
    'init',
    '-q',
    '-b',
    'main',
    '--separate-git-dir',
    join(ws, 'stash'),
  );
  const files: Record<string, string> = {
    'src/inner/file.txt': 'data\n',
    'planted/config': payloadConfig(marker),
    'planted/HEAD': 'ref: refs/heads/main\n',
  };
  for (const [path, text] of Object.entries(files))
    run(user, 'sh', ['-c', 'printf %s "$1" > "$2"', 'sh', text, join(ws, path)]);
  run(user, 'mkdir', ['-p', join(ws, 'src', '.git')]);
  run(user, 'sh', [
    '-c',
    'printf %s "$1" > "$2"',
    'sh',
    payloadConfig(marker),
    join(ws, 'src', '.git', 'config'),
  ]);
  return workspace;
}

function payloadConfig(marker: string): string {
  return `[core]\n\tfsmonitor = "touch ${marker}; false"\n\tpager = "touch ${marker}; cat"\n`;
}

function hook(marker: string): string {
  return `#!/bin/sh\ntouch ${marker}\n`;
}

function context(ws: string): Record<string, unknown> {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [{ path: { type: 'path', path: `file://${ws}` }, access: 'write' }],
      },
      network: 'restricted',
    },
    cwd: `file://${ws}`,
    windowsSandboxLevel: 'disabled',
  };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe.each(USERS)('the executable surface for file methods, as %s', (user) => {
  let workspace: Workspace;
  let served: ServeProcess;
  const u = (path: string) => `file://${join(workspace.ws, path)}`;
  const sandbox = () => context(workspace.ws);

  beforeAll(async () => {
    ensureBuilt();
    workspace = buildWorkspace(user);
    // The pre-check off: what refuses below is the helper, where it acts.
    served = ServeProcess.start(['--no-precheck'], { user, env: workspace.env });
    await served.handshake();
  }, 60_000);

  afterAll(async () => {
    if (served !== undefined) expect(await served.stop()).toBe(0);
    if (workspace !== undefined) rmSync(workspace.base, { recursive: true, force: true });
  });

  const refused = async (method: string, params: Record<string, unknown>) => {
    const reply = await served.request(method, { ...params, sandbox: sandbox() });
    expect(reply.error?.data.errorKind, `${method} ${JSON.stringify(params).slice(0, 120)}`).toBe(
      'protected_path',
    );
    expect(reply.error?.code).toBe(-32600);
    return reply.error?.message ?? '';
  };

  it('refuses every write path onto the surface, whatever its depth', async () => {
    const { marker } = workspace;
    await refused('fs/writeFile', { path: u('sub/.git'), dataBase64: b64('gitdir: ../planted\n') });
    await refused('fs/createDirectory', { path: u('sub/.git/hooks'), recursive: true });
    await refused('fs/writeFile', {
      path: u('vendor/lib/.git/config'),
      dataBase64: b64(payloadConfig(marker)),
    });
    await refused('fs/writeFile', {
      path: u('vendor/lib/.git/hooks/pre-commit'),
      dataBase64: b64(hook(marker)),
    });
    expect(
      await refused('fs/writeFile', { path: u('app/.husky/pre-commit'), dataBase64: b64(hook(marker)) }),
    ).toContain('core.hooksPath');
    expect(
      await refused('fs/writeFile', { path: u('stash/config'), dataBase64: b64(payloadConfig(marker)) }),
    ).toContain('git directory');
    await refused('fs/createDirectory', { path: u('a/.codex'), recursive: true });
    await refused('fs/writeFile', { path: u('a/.agents'), dataBase64: b64('x') });
    await refused('fs/writeFile', { path: u('half/HEAD'), dataBase64: b64('ref: refs/heads/main\n') });
    await refused('fs/copy', { sourcePath: u('src'), destinationPath: u('copied'), recursive: true });
    await refused('fs/rename', {
      sourcePath: u('planted'),
      destinationPath: u('sub/.git'),
      overwrite: false,
    });
    await refused('fs/edit', {
      path: u('vendor/lib/.git/config'),
      edits: [{ oldText: '[core]', newText: payloadConfig(marker) }],
    });
    await refused('fs/remove', { path: u('vendor/lib/.git'), recursive: true, force: false });
    await refused('fs/open', { handleId: 'h1', path: u('vendor/lib/.git/config'), mode: 'replace' });
    const patch = `*** Begin Patch\n*** Add File: sub/.git/config\n+[core]\n+\tfsmonitor = "touch ${marker}"\n*** End Patch\n`;
    // Under `on-failure` the patch goes to the sandbox, which refuses; by default it is only proposed.
    await refused('fs/applyPatch', { patch, cwd: u(''), approvalPolicy: 'on-failure' });
    await refused('fs/applyPatch', { patch, cwd: u(''), approvalPolicy: 'on-failure', atomic: true });
    const proposed = await served.request('fs/applyPatch', { patch, cwd: u(''), sandbox: sandbox() });
    expect(proposed.result?.status).toBe('needs_approval');
    const batch = await served.request('fs/batch', {
      sandbox: sandbox(),
      operations: [
        { method: 'fs/writeFile', params: { path: u('ok.txt'), dataBase64: b64('fine') } },
        {
          method: 'fs/writeFile',
          params: { path: u('vendor/lib/.git/config'), dataBase64: b64(payloadConfig(marker)) },
        },
      ],
    });
    const slots = batch.result?.results as Array<{ error?: { data: { errorKind: string } } }>;
    expect(slots[0]?.error).toBeUndefined();
    expect(slots[1]?.error?.data.errorKind).toBe('protected_path');
    for (const planted of ['sub/.git', 'a/.codex', 'a/.agents', 'copied', 'half/HEAD'])
      expect(existsSync(join(workspace.ws, planted)), planted).toBe(false);
  });

  it('refuses the same through the CLI shortcuts (pre-check on) and the MCP tools', async () => {
    const cli = (args: string[]) => runCli(args, { user, env: workspace.env, cwd: workspace.ws });
    const mkdir = await cli(['mkdir', '-p', 'sub/.git/objects']);
    expect(mkdir.code).not.toBe(0);
    expect(mkdir.stderr).toContain('protected metadata path .git');
    const write = await runCli(['write', 'vendor/lib/.git/config'], {
      user,
      env: workspace.env,
      cwd: workspace.ws,
      input: payloadConfig(workspace.marker),
    });
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('protected_path');
    const mcp = await connectMcp(ourServer([workspace.ws]));
    try {
      for (const [tool, args] of [
        ['write_file', { path: join(workspace.ws, 'sub', '.git'), content: 'gitdir: ../planted\n' }],
        ['create_directory', { path: join(workspace.ws, 'deep', '.codex') }],
        [
          'move_file',
          { source: join(workspace.ws, 'planted'), destination: join(workspace.ws, 'sub', '.git') },
        ],
        [
          'edit_file',
          {
            path: join(workspace.ws, 'vendor', 'lib', '.git', 'config'),
            edits: [{ oldText: '[core]', newText: '[core]\n\tfsmonitor = x' }],
          },
        ],
      ] as const) {
        const result = await mcp.call(tool, args);
        expect(result.isError, tool).toBe(true);
        expect(result.text, tool).toContain('protected');
      }
    } finally {
      await mcp.close();
    }
    expect(existsSync(join(workspace.ws, 'sub', '.git'))).toBe(false);
    expect(existsSync(join(workspace.ws, 'deep'))).toBe(false);
  }, 60_000);

  it('builds sandboxes beside a link planted on a surface name, refuses writing through it, and lets it be removed', async () => {
    const link = join(workspace.ws, '.codex');
    run(user, 'ln', ['-s', '/usr', link]);
    expect(
      (
        await served.request('fs/writeFile', {
          path: u('after.txt'),
          dataBase64: b64('x'),
          sandbox: sandbox(),
        })
      ).error,
    ).toBeUndefined();
    await refused('fs/writeFile', { path: u('.codex'), dataBase64: b64('x') });
    const removed = await runCli(['rm', '.codex'], { user, env: workspace.env, cwd: workspace.ws });
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    expect(existsSync(link) || isLink(link)).toBe(false);
  }, 60_000);

  it("then the host's own git status and commit run nothing planted, in every repository", () => {
    const { ws, marker } = workspace;
    for (const repo of ['', 'vendor/lib', 'app', 'wt', 'sub']) {
      const cwd = join(ws, repo);
      hostGit(user, workspace, cwd, 'status', '--short');
      try {
        hostGit(user, workspace, cwd, 'commit', '-q', '--allow-empty', '-m', 'host commit');
      } catch {
        // `sub` is no repository of its own: git walks up to the workspace's (a commit there may
        // find nothing to do). What matters is that nothing planted ran.
      }
    }
    expect(existsSync(marker)).toBe(false);
  });
});

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
