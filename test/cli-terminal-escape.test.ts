import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliRun, callMethod, personPath, runCli } from './support/cli.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * File names are chosen by whoever made the files, and a terminal acts on some characters instead
 * of showing them. Through the real CLI and sandbox: the human commands print such names escaped
 * (`\xNN`, `\u{NNNN}`, `\\`), while `fs-sandbox call` still returns them exactly.
 */

const CLEAR = 'clear\u001b[2J';
const CLIPBOARD = 'clip\u001b]52;c;aGVsbG8=\u0007';
const NEWLINE = 'two\nlines';
const BIDI = 'bidi\u202etxt.exe';
const C1 = 'c1\u009bx';
const BACKSLASH = 'back\\slash';
const DIRECTORY = 'dir\u001b[31m';
const FILES = [CLEAR, CLIPBOARD, NEWLINE, BIDI, C1, BACKSLASH];

let base: string;
let tmp: string;
let dir: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-names-');
  tmp = join(base, 'tmp\u001b]0;pwned\u0007');
  dir = join(base, 'names');
  await mkdir(tmp);
  await mkdir(join(dir, DIRECTORY), { recursive: true });
  for (const name of FILES) await writeFile(join(dir, name), name);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const env = () => ({ PATH: personPath(), TMPDIR: tmp });

/**
 * Every character a terminal could act on. Newlines are left out: they are the output's own lines
 * (that a name's newline does not show as one is checked line by line for ls).
 */
function rawControls(text: string): string[] {
  return [...text.replaceAll('\n', '')].filter((char) => {
    const code = char.codePointAt(0) as number;
    return (
      code <= 0x1f ||
      (code >= 0x7f && code <= 0x9f) ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069)
    );
  });
}

function expectNoRawControls(run: CliRun): void {
  expect(rawControls(run.stdout)).toEqual([]);
  expect(rawControls(run.stderr)).toEqual([]);
}

describe('names in human output (real CLI)', () => {
  it('ls prints every name escaped, one per line, through the sandbox', async () => {
    const run = await runCli(['ls', '--profile', 'read-only', '--cwd', dir, dir], {
      user: 'root',
      env: env(),
    });
    expect(run.code, run.stderr).toBe(0);
    expectNoRawControls(run);
    expect(run.stdout.split('\n')).toEqual([
      'back\\\\slash',
      'bidi\\u{202e}txt.exe',
      'c1\\x9bx',
      'clear\\x1b[2J',
      'clip\\x1b]52;c;aGVsbG8=\\x07',
      'dir\\x1b[31m/',
      'two\\x0alines',
      '',
    ]);
  });

  it('fs-sandbox call returns the exact names, in JSON that is itself safe to print', async () => {
    const outcome = await callMethod(
      'fs/readDirectory',
      { path: uri(dir), sandbox: sandboxContext({ read: [dir] }) },
      { user: 'root', env: env() },
    );
    expect(outcome.code, outcome.run.stderr).toBe(0);
    expectNoRawControls(outcome.run);
    const entries = (outcome.result?.entries ?? []) as Array<{ fileName: string; isDirectory: boolean }>;
    expect(entries.map((entry) => entry.fileName).sort()).toEqual([...FILES, DIRECTORY].sort());
    expect(entries.find((entry) => entry.fileName === DIRECTORY)?.isDirectory).toBe(true);
  });

  it('error messages and usage errors print the path or argument escaped', async () => {
    const missing = await runCli(['cat', '--profile', 'read-only', '--cwd', dir, join(dir, `no-${CLEAR}`)], {
      user: 'root',
      env: env(),
    });
    expect(missing.code).toBe(1);
    expectNoRawControls(missing);
    expect(missing.stderr).toContain(`${dir}/no-clear\\x1b[2J`);
    expect(missing.stderr).toContain('[not_found]');

    const usage = await runCli(['ls', `--${CLIPBOARD}`], { user: 'root', env: env() });
    expect(usage.code).toBe(2);
    expectNoRawControls(usage);
    expect(usage.stderr).toContain("unknown option '--clip\\x1b]52;c;aGVsbG8=\\x07'");
  });

  it('explain quotes such paths so the command is safe to show and exact to paste', async () => {
    const root = join(dir, DIRECTORY);
    const run = await runCli(['explain', '--raw', '--profile', 'workspace-write', '--cwd', root], {
      user: 'root',
      env: env(),
    });
    expect(run.code, run.stderr).toBe(0);
    expectNoRawControls(run);
    expect(run.stdout).toContain(`$'${dir}/dir\\x1b[31m'`);
    const command = run.stdout
      .split('\n')
      .filter((line) => !line.startsWith('#'))
      .join('\n');
    // bash reads the printed command back into words: the root comes back byte for byte.
    const words = spawnSync('bash', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' });
    expect(words.status, words.stderr).toBe(0);
    const argv = words.stdout.split('\0');
    expect(argv[0]).toMatch(/bwrap$/);
    expect(argv).toContain(root);
    expect(argv[argv.indexOf('--chdir') + 1]).toBe(root);
    // The summary in words names the same root, escaped.
    const summary = await runCli(['explain', '--profile', 'workspace-write', '--cwd', root], {
      user: 'root',
      env: env(),
    });
    expect(summary.code, summary.stderr).toBe(0);
    expectNoRawControls(summary);
    expect(summary.stdout).toContain(`  write        ${dir}/dir\\x1b[31m\n`);
  });

  it('the demo prints its workspace escaped (it lives under TMPDIR, which may hold anything)', async () => {
    const run = await runCli(['demo'], { user: 'root', env: env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expectNoRawControls(run);
    expect(run.stdout).toContain(`fs-sandbox demo: workspace ${base}/tmp\\x1b]0;pwned\\x07/fs-sandbox-demo-`);
  });

  it('doctor prints the bwrap it found escaped', async () => {
    const bwrapDir = join(base, `bin${BIDI}`);
    await mkdir(bwrapDir);
    const fake = join(bwrapDir, 'bwrap');
    await writeFile(fake, `#!/bin/sh\necho "bwrap: ${'\u001b[2J'}no namespaces" >&2\nexit 1\n`, {
      mode: 0o755,
    });
    const run = await runCli(['doctor'], {
      user: 'root',
      env: { ...env(), FS_SANDBOX_BWRAP: fake, FS_SANDBOX_BACKEND: 'bwrap' },
    });
    expect(run.code).toBe(1);
    expectNoRawControls(run);
    expect(run.stdout).toContain(`${base}/binbidi\\u{202e}txt.exe/bwrap`);
    expect(run.stdout).toMatch(/^user namespaces\s+FAIL\s+bwrap: \\x1b\[2Jno namespaces/m);
  });
});
