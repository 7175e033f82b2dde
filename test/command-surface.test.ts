import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NOBODY_UID, runCli, USERS } from './support/cli.js';

/**
 * What a command (`fs-sandbox run`, which shares its launch with process/start, app-server's
 * process/spawn and the library's run/spawn) may leave on the host, tried as an attacker would, as
 * root and as nobody: renaming the parent of a denied or read-only path so that the next command's
 * mask misses it.
 */

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

describe.each(USERS)('as %s', (user: CliUser) => {
  it("a denied file's parents cannot be renamed, so the next command's mask still covers it", async () => {
    const ws = workspace(user, 'rename-deny', { 'secret/key.txt': 'KEY-1', 'a/b/deep.txt': 'KEY-2' });
    const flags = ['--deny', join(ws, 'secret/key.txt'), '--deny', join(ws, 'a/b/deep.txt')];
    const moved = await sh(user, ws, 'mv secret s2; mv a x; mv a/b a/c; echo moved', flags);
    expect(moved.stdout).toContain('moved');
    expect(moved.stderr).toMatch(/busy/i);
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
    // Files beside the mask stay writable.
    const beside = await sh(
      user,
      ws,
      'echo new > secret/other.txt && mv secret/other.txt secret/o2 && cat secret/o2',
      flags,
    );
    expect(beside.stdout.trim()).toBe('new');
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
});
