import { execFileSync } from 'node:child_process';
import { chmod, lchown, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CliUser, NOBODY_UID, personPath } from './cli.js';

/**
 * A workspace and its surroundings on the real disk:
 *
 *   base/ws/            writable root (and cwd)
 *        hello.txt, sub/a.txt, .git/HEAD, .git/hooks/, denied-dir/secret2.txt, denied.txt, fifo
 *        link-out -> ../outside/secret.txt, dirlink-out -> ../outside, deeplink -> ../outside/inner
 *   base/outside/       not granted at all: secret.txt, inner/
 *   base/ro/            read-only root: r.txt
 *   base/tmp/           the CLI's TMPDIR, so anything that honours it stays inside the snapshot
 *
 * For the unprivileged runs everything belongs to nobody: the kernel's own permission checks then
 * allow every write, and only the sandbox stands between the helper and `outside`.
 */
export interface Fixture {
  base: string;
  ws: string;
  outside: string;
  ro: string;
  tmp: string;
  secretText: string;
  user: CliUser;
}

export const SECRET_TEXT = 'top secret: the launch codes\n';

export async function createFixture(user: CliUser): Promise<Fixture> {
  const base = await mkdtemp('/tmp/fs-sandbox-e2e-');
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  const ro = join(base, 'ro');
  const tmp = join(base, 'tmp');
  for (const dir of [
    join(ws, 'sub'),
    join(ws, '.git', 'hooks'),
    join(ws, 'denied-dir'),
    join(outside, 'inner'),
    ro,
    tmp,
  ]) {
    await mkdir(dir, { recursive: true });
  }
  await writeFile(join(ws, 'hello.txt'), 'hello sandbox\n');
  await writeFile(join(ws, 'sub', 'a.txt'), 'a\n');
  await writeFile(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(ws, 'denied-dir', 'secret2.txt'), 'denied directory content\n');
  await writeFile(join(ws, 'denied.txt'), 'denied file content\n');
  await writeFile(join(outside, 'secret.txt'), SECRET_TEXT);
  await writeFile(join(ro, 'r.txt'), 'read only\n');
  await symlink('../outside/secret.txt', join(ws, 'link-out'));
  await symlink('../outside', join(ws, 'dirlink-out'));
  await symlink('../outside/inner', join(ws, 'deeplink'));
  execFileSync('mkfifo', [join(ws, 'fifo')]);
  await chmod(base, 0o755);
  if (user === 'nobody') await chownTree(base, NOBODY_UID);
  return { base, ws, outside, ro, tmp, secretText: SECRET_TEXT, user };
}

async function chownTree(path: string, uid: number): Promise<void> {
  await lchown(path, uid, uid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid);
    else await lchown(child, uid, uid);
  }
}

export async function removeFixture(fixture: Fixture): Promise<void> {
  // A served broker refills its pool after each reply: a spare whose bwrap is binding a path below
  // the workspace as it is removed may make that mount point again, so the removal retries.
  await rm(fixture.base, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

export const uri = (path: string): string => `file://${path}`;

/** The sandbox context the suites use: write the workspace, read `ro`, deny one dir and one file. */
export function workspaceContext(fixture: Fixture): Record<string, unknown> {
  const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          entry(fixture.ws, 'write'),
          entry(fixture.ro, 'read'),
          entry(join(fixture.ws, 'denied-dir'), 'deny'),
          entry(join(fixture.ws, 'denied.txt'), 'deny'),
        ],
      },
      network: 'restricted',
    },
    cwd: uri(fixture.ws),
    workspaceRoots: [uri(fixture.ws)],
    windowsSandboxLevel: 'disabled',
  };
}

/** The CLI environment: only what it needs, with TMPDIR inside the fixture. */
export function cliEnv(fixture: Fixture, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: personPath(), TMPDIR: fixture.tmp, ...extra };
}
