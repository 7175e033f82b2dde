import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliRun, personPath, runCli } from './support/cli.js';

/**
 * The human verbs through the real CLI and sandbox, checked on the real host afterwards: they are
 * sandboxed by default (workspace-write on --cwd, the platform's minimal reads), and their flags
 * and operands mean what they look like. The CLI is started from the repository, so a test that
 * passes relative paths shows they follow --cwd, not the shell's directory.
 */

let base: string;
let ws: string;
let other: string;
let tmp: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-people-');
  ws = join(base, 'ws');
  other = join(base, 'other');
  tmp = join(base, 'tmp');
  for (const dir of [ws, other, tmp]) await mkdir(dir);
  await writeFile(join(ws, 'notes.txt'), 'notes\n');
  await writeFile(join(ws, '.env'), 'TOKEN=1\n');
  await writeFile(join(other, 'secret.txt'), 'secret\n');
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: personPath(),
  TMPDIR: tmp,
  ...extra,
});
const cli = (args: string[], input?: string, extra?: Record<string, string>) =>
  runCli(args, { user: 'root', env: env(extra), input });

function expectRefused(run: CliRun, kind: string): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(new RegExp(`^fs-sandbox: [^\\n]* \\[${kind}\\]\\n$`));
}

describe('the human verbs are sandboxed by default', () => {
  it('writes inside the cwd with no profile flags, and refuses a write outside it with nothing created', async () => {
    const inside = await cli(['write', '--cwd', ws, 'made.txt', 'hello']);
    expect(inside.code, inside.stderr).toBe(0);
    expect(readFileSync(join(ws, 'made.txt'), 'utf8')).toBe('hello');

    const outside = await cli(['write', '--cwd', ws, join(other, 'made.txt'), 'hello']);
    expectRefused(outside, 'permission_denied');
    expect(await readdir(other)).toEqual(['secret.txt']);

    const copied = await cli(['cp', '--cwd', ws, 'notes.txt', join(other, 'copy.txt')]);
    expectRefused(copied, 'permission_denied');
    expect(await readdir(other)).toEqual(['secret.txt']);
  });

  it('refuses reads outside the cwd unless --read-root grants them; read-only reads the whole disk', async () => {
    const path = join(other, 'secret.txt');
    expectRefused(await cli(['cat', '--cwd', ws, path]), 'permission_denied');
    expectRefused(await cli(['ls', '--cwd', ws, other]), 'permission_denied');

    const granted = await cli(['cat', '--cwd', ws, '--read-root', other, path]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stdout).toBe('secret\n');
    // A read root is only read: writing there is still refused.
    expectRefused(
      await cli(['write', '--cwd', ws, '--read-root', other, join(other, 'w.txt'), 'x']),
      'permission_denied',
    );
    expect(await readdir(other)).toEqual(['secret.txt']);

    const wholeDisk = await cli(['cat', '--profile', 'read-only', '--cwd', ws, path]);
    expect(wholeDisk.stdout).toBe('secret\n');
  });

  it('--profile read-only with --read-root reads only the cwd, the read roots and the minimal roots, and says so in --help', async () => {
    const far = join(base, 'far');
    await mkdir(far);
    await writeFile(join(far, 'far.txt'), 'FAR AWAY\n');
    const readOnly = (verb: string, ...rest: string[]) => [
      verb,
      '--profile',
      'read-only',
      '--cwd',
      ws,
      '--read-root',
      other,
      ...rest,
    ];
    const inCwd = await cli(readOnly('cat', 'notes.txt'));
    expect(inCwd.stdout, inCwd.stderr).toBe('notes\n');
    const inReadRoot = await cli(readOnly('cat', join(other, 'secret.txt')));
    expect(inReadRoot.stdout, inReadRoot.stderr).toBe('secret\n');
    const listed = await cli(readOnly('ls', other));
    expect(listed.stdout, listed.stderr).toContain('secret.txt');
    const grepped = await cli(readOnly('grep', 'secret', other));
    expect(grepped.stdout, grepped.stderr).toContain('secret.txt:1:secret');
    const minimal = await cli(readOnly('cat', '/etc/hostname'));
    expect(minimal.stdout, minimal.stderr).toBe(readFileSync('/etc/hostname', 'utf8'));

    // Elsewhere: refused by the policy check, typed; and without it, by the kernel sandbox, where
    // the directory is not even mounted.
    for (const args of [
      readOnly('cat', join(far, 'far.txt')),
      readOnly('ls', far),
      readOnly('grep', 'FAR', far),
    ]) {
      expectRefused(await cli(args), 'permission_denied');
      const kernel = await cli([...args.slice(0, 1), '--no-precheck', ...args.slice(1)]);
      expect(kernel.code, kernel.stderr).toBe(1);
      expect(kernel.stdout).not.toContain('FAR AWAY');
      expect(kernel.stderr).toMatch(/^fs-sandbox: [^\n]* \[(permission_denied|not_found)\]\n$/);
    }
    // Read-only writes nothing, in the cwd either.
    expectRefused(await cli(readOnly('write', 'ro-made.txt', 'x')), 'permission_denied');
    expect(existsSync(join(ws, 'ro-made.txt'))).toBe(false);
    expect(await readdir(far)).toEqual(['far.txt']);

    const help = (await cli(['cat', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      'read-only: writes nothing and reads the WHOLE disk (but the root-only secrets such as /etc/shadow and host keys), or with --read-root only the minimal roots, the cwd and the read roots.',
    );
  });

  it('reads the minimal roots of the platform by default (on Linux they include /etc)', async () => {
    // /etc holds the system configuration a program needs to start, so it is in the minimal reads.
    const hostname = await cli(['cat', '--cwd', ws, '/etc/hostname']);
    expect(hostname.code, hostname.stderr).toBe(0);
    expect(hostname.stdout).toBe(readFileSync('/etc/hostname', 'utf8'));
  });

  it('--no-sandbox runs in-process: no bwrap is started, and nothing is refused by policy', async () => {
    // A bwrap that cannot exist, required (auto would take Landlock): a sandboxed run cannot start,
    // an in-process one never looks.
    const noBwrap = { FS_SANDBOX_BWRAP: join(base, 'no-such-bwrap'), FS_SANDBOX_BACKEND: 'bwrap' };
    const sandboxed = await cli(['cat', '--cwd', ws, 'notes.txt'], undefined, noBwrap);
    expectRefused(sandboxed, 'sandbox_unavailable');
    const inProcess = await cli(
      ['cat', '--no-sandbox', '--cwd', ws, join(other, 'secret.txt')],
      undefined,
      noBwrap,
    );
    expect(inProcess.code, inProcess.stderr).toBe(0);
    expect(inProcess.stdout).toBe('secret\n');
  });
});

describe('flags and operands mean what they look like', () => {
  it("--deny '*.env' makes cat .env fail; ls still shows the name, as the policy lists denied entries", async () => {
    const cat = await cli(['cat', '--cwd', ws, '--deny', '*.env', '.env']);
    expectRefused(cat, 'permission_denied');
    expect(cat.stderr).toContain(`${ws}/*.env`);
    expect((await cli(['cat', '--cwd', ws, '.env'])).stdout).toBe('TOKEN=1\n');

    const ls = await cli(['ls', '--cwd', ws, '--deny', '*.env']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout.split('\n')).toContain('.env');

    // A denied name cannot be overwritten either, and is left as it was.
    expectRefused(await cli(['write', '--cwd', ws, '--deny', '*.env', '.env', 'x']), 'permission_denied');
    expect(readFileSync(join(ws, '.env'), 'utf8')).toBe('TOKEN=1\n');
  });

  it('a plain --deny path is denied, relative to --cwd', async () => {
    expectRefused(await cli(['cat', '--cwd', ws, '--deny', 'notes.txt', 'notes.txt']), 'permission_denied');
  });

  it('relative operands follow --cwd, not the directory the CLI was started in', async () => {
    const cat = await cli(['cat', '--cwd', ws, 'notes.txt']);
    expect(cat.stdout).toBe('notes\n');
    const stat = await cli(['stat', '--json', '--cwd', ws, 'notes.txt']);
    expect(JSON.parse(stat.stdout)).toMatchObject({ isFile: true });
    await mkdir(join(ws, 'sub'));
    expect((await cli(['write', '--cwd', join(ws, 'sub'), 'rel.txt', 'r'])).code).toBe(0);
    expect(readFileSync(join(ws, 'sub', 'rel.txt'), 'utf8')).toBe('r');
    expect((await cli(['rm', '--cwd', join(ws, 'sub'), 'rel.txt'])).code).toBe(0);
    expect(existsSync(join(ws, 'sub', 'rel.txt'))).toBe(false);
  });

  it('a --cwd, --writable-root or --read-root that is not a directory is an error naming the flag', async () => {
    const cwd = await cli(['ls', '--cwd', '/nonexistent']);
    expect(cwd.stderr).toBe('fs-sandbox: --cwd /nonexistent does not exist [invalid_params]\n');
    expect(cwd.code).toBe(1);
    const writable = await cli(['write', '--cwd', ws, '--writable-root', 'notes.txt', 'a', 'x']);
    expect(writable.stderr).toBe(
      `fs-sandbox: --writable-root ${ws}/notes.txt is not a directory [invalid_params]\n`,
    );
    const read = await cli(['cat', '--cwd', ws, '--read-root', join(base, 'gone'), 'notes.txt']);
    expect(read.stderr).toBe(`fs-sandbox: --read-root ${base}/gone does not exist [invalid_params]\n`);
  });

  it('write with no text and an empty stdin is refused, the file untouched; --allow-empty writes it', async () => {
    const refused = await cli(['write', '--cwd', ws, 'notes.txt'], '');
    expect(refused.stderr).toBe(
      'fs-sandbox: stdin is empty; pass --allow-empty to write an empty file, or give TEXT [invalid_params]\n',
    );
    expect(refused.code).toBe(1);
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('notes\n');

    expect((await cli(['write', '--cwd', ws, '--allow-empty', 'empty.txt'], '')).code).toBe(0);
    expect(readFileSync(join(ws, 'empty.txt'), 'utf8')).toBe('');
    expect((await cli(['write', '--cwd', ws, 'piped.txt'], 'from stdin')).code).toBe(0);
    expect(readFileSync(join(ws, 'piped.txt'), 'utf8')).toBe('from stdin');
  });

  it('write --create and --expect-sha256 guard the file', async () => {
    expectRefused(await cli(['write', '--cwd', ws, '--create', 'notes.txt', 'x']), 'file_already_exists');
    expectRefused(
      await cli(['write', '--cwd', ws, '--expect-sha256', '0'.repeat(64), 'notes.txt', 'x']),
      'hash_mismatch',
    );
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('notes\n');
    const { createHash } = await import('node:crypto');
    const hex = createHash('sha256').update('notes\n').digest('hex');
    expect((await cli(['write', '--cwd', ws, '--expect-sha256', hex, 'notes.txt', 'new'])).code).toBe(0);
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('new');
    await writeFile(join(ws, 'notes.txt'), 'notes\n');
  });
});
