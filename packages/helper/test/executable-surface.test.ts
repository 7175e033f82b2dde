import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  call,
  expectKind,
  fails,
  isPosix,
  ok,
  RESTRICTED_SANDBOX,
  tempDir,
  uri,
  writableGuard,
} from './support/helper-run.js';

/**
 * The executable surface at any depth, as the helper enforces it where it acts: every write path
 * refuses `.git`, `.codex` and `.agents` below any directory, a directory laid out as a git
 * directory whatever its name, a write that would complete that layout, and the directory a
 * repository's core.hooksPath names; a symlink planted on a surface name may be removed.
 */

const sandbox = RESTRICTED_SANDBOX;

function workspace(): { root: string; guard: ReturnType<typeof writableGuard> } {
  const root = realpathSync(tempDir());
  return { root, guard: writableGuard(root) };
}

/** A directory laid out as git lays out a git directory (what a gitfile names, a bare repository). */
function gitDirectoryAt(path: string): void {
  mkdirSync(join(path, 'objects'), { recursive: true });
  mkdirSync(join(path, 'refs', 'heads'), { recursive: true });
  writeFileSync(join(path, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(path, 'config'), '[core]\n\tbare = false\n');
}

const data = (text: string) => Buffer.from(text).toString('base64');

describe.runIf(isPosix)('the executable surface in the helper', () => {
  it('refuses .git, .codex and .agents at any depth, for writes and directories', async () => {
    const { root, guard } = workspace();
    for (const dir of ['sub', 'a/b/.codex', 'x', 'deep/.GIT'])
      mkdirSync(join(root, dir), { recursive: true });
    for (const path of ['sub/.git', 'a/b/.codex/config.toml', 'x/.agents', 'deep/.GIT/config']) {
      const error = await fails(
        'fs/writeFile',
        { path: uri(join(root, path)), dataBase64: data('x'), sandbox },
        { guard },
      );
      expectKind(error, 'protected_path', -32600);
    }
    for (const path of ['sub/.git/objects', 'sub/.codex', 'sub/deeper/.agents']) {
      const error = await fails(
        'fs/createDirectory',
        { path: uri(join(root, path)), recursive: true, sandbox },
        { guard },
      );
      expectKind(error, 'protected_path', -32600);
    }
    // Refused before the first directory was made.
    expect(existsSync(join(root, 'sub', 'deeper'))).toBe(false);
    expect(existsSync(join(root, 'sub', '.git'))).toBe(false);
  });

  it("keeps an existing nested repository's config and hooks, and a gitfile's target", async () => {
    const { root, guard } = workspace();
    gitDirectoryAt(join(root, 'vendor', 'lib', '.git'));
    mkdirSync(join(root, 'vendor', 'lib', '.git', 'hooks'));
    gitDirectoryAt(join(root, 'stash'));
    mkdirSync(join(root, 'stash', 'hooks'));
    mkdirSync(join(root, 'wt'));
    writeFileSync(join(root, 'wt', '.git'), 'gitdir: ../stash\n');
    for (const path of [
      'vendor/lib/.git/config',
      'vendor/lib/.git/hooks/pre-commit',
      'stash/config',
      'stash/hooks/pre-commit',
    ]) {
      const error = await fails(
        'fs/writeFile',
        { path: uri(join(root, path)), dataBase64: data('[core]\n\tfsmonitor = touch x\n'), sandbox },
        { guard },
      );
      expectKind(error, 'protected_path', -32600);
    }
    const error = await fails(
      'fs/createDirectory',
      { path: uri(join(root, 'stash', 'info')), recursive: true, sandbox },
      { guard },
    );
    expect(error.message).toContain('inside the git directory');
    expect(readFileSync(join(root, 'stash', 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  it('refuses the write that would complete a git directory, in any order', async () => {
    const { root, guard } = workspace();
    mkdirSync(join(root, 'plain', 'objects'), { recursive: true });
    await ok(
      'fs/writeFile',
      { path: uri(join(root, 'plain', 'config')), dataBase64: data('[core]\n'), sandbox },
      { guard },
    );
    await ok(
      'fs/writeFile',
      { path: uri(join(root, 'plain', 'HEAD')), dataBase64: data('x'), sandbox },
      { guard },
    );
    const error = await fails(
      'fs/createDirectory',
      { path: uri(join(root, 'plain', 'refs')), recursive: false, sandbox },
      { guard },
    );
    expect(error.message).toContain('would make');
    mkdirSync(join(root, 'other', 'refs'), { recursive: true });
    writeFileSync(join(root, 'other', 'commondir'), '../x\n');
    expectKind(
      await fails(
        'fs/writeFile',
        { path: uri(join(root, 'other', 'HEAD')), dataBase64: data('x'), sandbox },
        { guard },
      ),
      'protected_path',
      -32600,
    );
  });

  it("protects the directory a repository's core.hooksPath names, relative or absolute", async () => {
    const { root, guard } = workspace();
    gitDirectoryAt(join(root, 'app', '.git'));
    writeFileSync(
      join(root, 'app', '.git', 'config'),
      `[core]\n\thooksPath = .husky\n[include]\n\tpath = extra.cfg\n`,
    );
    writeFileSync(
      join(root, 'app', '.git', 'extra.cfg'),
      `[Core]\n\tHooksPath = "${join(root, 'app', 'tool hooks')}"\n`,
    );
    mkdirSync(join(root, 'app', '.husky'));
    mkdirSync(join(root, 'app', 'tool hooks'));
    for (const path of ['app/.husky/pre-commit', 'app/.husky', 'app/tool hooks/pre-push']) {
      const error = await fails(
        'fs/writeFile',
        { path: uri(join(root, path)), dataBase64: data('#!/bin/sh\ntouch marker\n'), sandbox },
        { guard },
      );
      expectKind(error, 'protected_path', -32600);
      expect(error.message).toContain('core.hooksPath');
    }
    await ok(
      'fs/writeFile',
      { path: uri(join(root, 'app', 'src.txt')), dataBase64: data('fine'), sandbox },
      { guard },
    );
  });

  it('refuses renames onto a surface name, of a tree holding a repository, and copies of either', async () => {
    const { root, guard } = workspace();
    mkdirSync(join(root, 'planted', 'hooks'), { recursive: true });
    mkdirSync(join(root, 'sub'));
    gitDirectoryAt(join(root, 'repo', '.git'));
    gitDirectoryAt(join(root, 'bare.git'));
    const rename = (from: string, to: string) =>
      fails(
        'fs/rename',
        {
          sourcePath: uri(join(root, from)),
          destinationPath: uri(join(root, to)),
          overwrite: false,
          sandbox,
        },
        { guard },
      );
    for (const [from, to] of [
      ['planted', 'sub/.git'],
      ['planted', 'sub/.codex'],
      ['repo', 'moved'],
      ['bare.git', 'moved'],
    ] as const) {
      expectKind(await rename(from, to), 'protected_path', -32600);
    }
    for (const from of ['repo', 'bare.git']) {
      const error = await fails(
        'fs/copy',
        {
          sourcePath: uri(join(root, from)),
          destinationPath: uri(join(root, 'copy')),
          recursive: true,
          sandbox,
        },
        { guard },
      );
      expectKind(error, 'protected_path', -32600);
    }
    expect(existsSync(join(root, 'copy'))).toBe(false);
    expect(existsSync(join(root, 'moved'))).toBe(false);
  });

  it('refuses removing a repository or a tree that holds one, and lets a planted link on a surface name go', async () => {
    const { root, guard } = workspace();
    gitDirectoryAt(join(root, 'vendor', 'lib', '.git'));
    mkdirSync(join(root, '.codex'));
    symlinkSync('/usr', join(root, 'sub-codex'));
    mkdirSync(join(root, 'x'));
    symlinkSync('/usr', join(root, 'x', '.codex'));
    for (const path of ['vendor', 'vendor/lib/.git', '.codex']) {
      const error = await fails(
        'fs/remove',
        { path: uri(join(root, path)), recursive: true, force: false, sandbox },
        { guard },
      );
      expectKind(error, 'protected_path', -32600);
    }
    await ok(
      'fs/remove',
      { path: uri(join(root, 'x', '.codex')), recursive: false, force: false, sandbox },
      { guard },
    );
    expect(existsSync(join(root, 'x', '.codex'))).toBe(false);
    expect(lstatSync(join(root, 'vendor', 'lib', '.git', 'HEAD')).isFile()).toBe(true);
  });

  it('refuses a patch that adds a nested .git/config, and lets a .git inside an explicit grant be written', async () => {
    const { root, guard } = workspace();
    const patch =
      '*** Begin Patch\n*** Add File: sub/.git/config\n+[core]\n+\tfsmonitor = touch x\n*** End Patch\n';
    const reply = await call('fs/applyPatch', { patch, cwd: uri(root), sandbox }, { guard });
    expect(reply.status).toBe('error');
    expect(existsSync(join(root, 'sub', '.git'))).toBe(false);
    mkdirSync(join(root, 'r', '.git'), { recursive: true });
    const granted = {
      ...guard,
      entries: [
        ...guard.entries,
        { path: join(root, 'r', '.git'), reason: 'writable_root' as const, rule: 'writable root' },
      ],
    };
    await ok(
      'fs/writeFile',
      { path: uri(join(root, 'r', '.git', 'config')), dataBase64: data('[core]\n'), sandbox },
      { guard: granted },
    );
  });
});
