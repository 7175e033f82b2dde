import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { personPath, runCli } from './support/cli.js';

/**
 * A denied file's other names (hard links) are refused by identity on every read; ripgrep opens
 * them by name, so `fs/search` drops their lines. Through the real CLI and bwrap.
 */

let dir: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-search-links-'));
  mkdirSync(join(dir, 'denied-dir'));
  writeFileSync(join(dir, 's.env'), 'password=hunter2\n');
  linkSync(join(dir, 's.env'), join(dir, 'other-name.txt'));
  writeFileSync(join(dir, 'denied-dir', 'k.txt'), 'password=swordfish\n');
  linkSync(join(dir, 'denied-dir', 'k.txt'), join(dir, 'second-name.txt'));
  writeFileSync(join(dir, 'plain.txt'), 'password=public\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const grep = (...args: string[]) =>
  runCli(['grep', ...args], { user: 'root', cwd: dir, env: { PATH: personPath() } });

describe('search and hard links of denied files', () => {
  it('finds the lines of every name when nothing is denied (the control)', async () => {
    const run = await grep('password');
    expect(run.stdout).toContain('other-name.txt:1:password=hunter2');
    expect(run.stdout).toContain('second-name.txt:1:password=swordfish');
  });

  it('drops the other names of a denied file and of a file in a denied directory', async () => {
    for (const deny of [
      ['--deny', 's.env'],
      ['--deny', 'denied-dir'],
      ['--deny', 's.env', '--deny', 'denied-dir'],
    ]) {
      const run = await grep(...deny, 'password');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('plain.txt:1:password=public');
      if (deny.includes('s.env')) expect(run.stdout).not.toContain('hunter2');
      if (deny.includes('denied-dir')) expect(run.stdout).not.toContain('swordfish');
    }
    const json = await grep('--deny', 's.env', '--json', 'hunter2');
    expect(json.stdout).not.toContain('hunter2');
  });
});
