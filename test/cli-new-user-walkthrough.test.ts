import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO } from './support/build.js';
import { personPath, runCli } from './support/cli.js';

/**
 * A new user's first session, as a script: they `cd` into a small project and use the CLI the way
 * the README shows it, with no flags beyond what a person would type. Each step checks what the
 * person would see and what is on disk afterwards.
 */

let base: string;
let project: string;
let outside: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-walkthrough-');
  project = join(base, 'project');
  outside = join(base, 'outside');
  await mkdir(join(project, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(project, 'README.md'), '# my project\n');
  await writeFile(join(project, '.env'), 'API_KEY=secret\n');
  await writeFile(join(project, 'bell\u0007\u001b[2Jname.txt'), '');
  await symlink('src', join(project, 'src-link'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** The person's shell: inside the project, a plain PATH, nothing else. */
const fsSandbox = (args: string[], input?: string) =>
  runCli(args, { user: 'root', env: { PATH: personPath() }, cwd: project, input });

/** The umask this process (and so the CLI it starts) has, from the kernel. */
function currentUmask(): number {
  const line = readFileSync('/proc/self/status', 'utf8').match(/^Umask:\s*([0-7]+)$/m);
  return Number.parseInt(line?.[1] ?? '022', 8);
}

describe('a new user, in their project directory', () => {
  it('writes a file with no flags: inside the project, with the mode the umask gives', async () => {
    const run = await fsSandbox(['write', 'notes.txt', 'first note\n']);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(project, 'notes.txt'), 'utf8')).toBe('first note\n');
    expect(statSync(join(project, 'notes.txt')).mode & 0o777).toBe(0o666 & ~currentUmask());
  });

  it('cannot write outside the project without saying so, and nothing appears there', async () => {
    const run = await fsSandbox(['write', '../outside/escaped.txt', 'x']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^fs-sandbox: cannot write .*outside writable roots \[permission_denied\]\n$/);
    expect(await readdir(outside)).toEqual([]);
  });

  it('hides the secret with --deny "*.env"', async () => {
    expect((await fsSandbox(['cat', '.env'])).stdout).toBe('API_KEY=secret\n');
    const denied = await fsSandbox(['cat', '--deny', '*.env', '.env']);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toBe('');
    expect(denied.stderr).toMatch(/\[permission_denied\]\n$/);
  });

  it('names files relative to --cwd when it is given, wherever the shell is', async () => {
    const run = await runCli(['cat', '--cwd', project, 'README.md'], {
      user: 'root',
      env: { PATH: '/usr/bin:/bin' },
      cwd: base,
    });
    expect(run.stdout).toBe('# my project\n');
  });

  it('is not allowed to empty a file by a forgotten pipe', async () => {
    const run = await fsSandbox(['write', 'notes.txt'], '');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/--allow-empty/);
    expect(readFileSync(join(project, 'notes.txt'), 'utf8')).toBe('first note\n');
  });

  it('sees a symlink as a symlink in ls -l, and control characters in names escaped', async () => {
    const run = await fsSandbox(['ls', '-l']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.find((line) => line.endsWith(' src'))).toMatch(/^drwx[-r][-w][-x][-r][-w][-x] /);
    expect(lines.find((line) => line.includes('src-link'))).toMatch(/^lrwxrwxrwx .* src-link -> /);
    for (const raw of ['\u0007', '\u001b']) expect(run.stdout).not.toContain(raw);
    expect(run.stdout).toContain('bell\\x07\\x1b[2Jname.txt');
  });

  it('gets exact wire results with --json, the same as `call`', async () => {
    const stat = await fsSandbox(['stat', '--json', 'README.md']);
    const uri = `file://${join(project, 'README.md')}`;
    const sandbox = JSON.stringify({
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [{ path: { type: 'path', path: `file://${project}` }, access: 'read' }],
        },
        network: 'restricted',
      },
    });
    const call = await fsSandbox(['call', 'fs/getMetadata', `{"path":"${uri}","sandbox":${sandbox}}`]);
    expect(JSON.parse(stat.stdout)).toEqual(JSON.parse(call.stdout));
    const cat = await fsSandbox(['cat', '--json', 'README.md']);
    expect(Buffer.from(JSON.parse(cat.stdout).dataBase64, 'base64').toString()).toBe('# my project\n');
  });

  it('is told in words what the sandbox allows, before the exact command', async () => {
    const run = await fsSandbox(['explain']);
    expect(run.code, run.stderr).toBe(0);
    const [summary] = run.stdout.split('---- exact command');
    expect(summary).toMatch(new RegExp(`write\\s+${project.replace(/[/.]/g, '\\$&')}`));
    expect(summary).toMatch(/protected .*\.git/);
    expect(summary).toMatch(/network\s+none/);
  });

  it('runs `fs-sandbox` from PATH after the set-up links it (scripts/link-cli.sh, run by setup.sh)', async () => {
    // The set-up's link step, into a directory of this test's own: /usr/local/bin, its default, is
    // shared by every clone on the machine. A person's login shell then has that directory on PATH.
    const linkDir = join(base, 'bin');
    await mkdir(linkDir);
    execFileSync('bash', [join(REPO, 'scripts/link-cli.sh')], {
      env: { PATH: '/usr/bin:/bin', FS_SANDBOX_LINK_DIR: linkDir },
    });
    const PATH = `${linkDir}:/usr/bin:/bin`;
    const onPath = execFileSync('sh', ['-c', 'command -v fs-sandbox'], {
      encoding: 'utf8',
      env: { PATH },
    }).trim();
    expect(onPath).toBe(join(linkDir, 'fs-sandbox'));
    expect(realpathSync(onPath)).toBe(realpathSync(join(REPO, 'packages/cli/bin/fs-sandbox.js')));
    expect(execFileSync('fs-sandbox', ['--version'], { encoding: 'utf8', env: { PATH } }).trim()).toMatch(
      /^\d+\.\d+\.\d+$/,
    );
    // Run again: the link of ours is kept, and the run says so.
    const link = (dir: string) =>
      spawnSync('bash', [join(REPO, 'scripts/link-cli.sh')], {
        env: { PATH: '/usr/bin:/bin', FS_SANDBOX_LINK_DIR: dir },
        encoding: 'utf8',
      });
    expect(link(linkDir).stdout).toMatch(/already links to this clone/);
    expect(realpathSync(onPath)).toBe(realpathSync(join(REPO, 'packages/cli/bin/fs-sandbox.js')));
    // Another clone's link is left alone, with the way to run this clone's CLI.
    const other = join(base, 'bin-other');
    const otherClone = join(base, 'other-clone-cli.js');
    await mkdir(other);
    await writeFile(otherClone, '#!/bin/sh\n');
    await symlink(otherClone, join(other, 'fs-sandbox'));
    const refused = link(other);
    expect(refused.status).toBe(0);
    expect(refused.stderr).toMatch(/not to this clone; left alone/);
    expect(readlinkSync(join(other, 'fs-sandbox'))).toBe(otherClone);
    // A link whose clone is gone is replaced, and the run says so.
    await rm(otherClone);
    expect(link(other).stdout).toMatch(/which is gone; replacing it\nsetup: linked /);
    expect(realpathSync(join(other, 'fs-sandbox'))).toBe(
      realpathSync(join(REPO, 'packages/cli/bin/fs-sandbox.js')),
    );
    // A real file is left alone.
    const file = join(base, 'bin-file');
    await mkdir(file);
    await writeFile(join(file, 'fs-sandbox'), '#!/bin/sh\n');
    expect(link(file).stderr).toMatch(/is not a link; left alone/);
    expect(readFileSync(join(file, 'fs-sandbox'), 'utf8')).toBe('#!/bin/sh\n');
  });
});
