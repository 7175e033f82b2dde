import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { runCli } from './support/cli.js';

/** The real helper's wire wording, rendered in the CLI's words by rm, cp and call. */
let dir: string;
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' });

beforeAll(async () => {
  ensureBuilt();
  dir = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-words-')));
  await mkdir(join(dir, 'tree'));
  await writeFile(join(dir, 'tree', 'f'), 'x');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('CLI error words (real helper, sandboxed)', () => {
  it('rm and cp of a directory without -r say to use -r, mkdir without -p says -p, and keep the kind', async () => {
    const flags = ['--profile', 'workspace-write', '--cwd', dir];
    const removed = await runCli(['rm', ...flags, join(dir, 'tree')], { user: 'root', env: env() });
    expect(removed.code).toBe(1);
    expect(removed.stderr).toBe(
      `fs-sandbox: Directory not empty: ${dir}/tree (use rm -r to remove it with its contents) [is_directory]\n`,
    );
    const copied = await runCli(['cp', ...flags, join(dir, 'tree'), join(dir, 'copy')], {
      user: 'root',
      env: env(),
    });
    expect(copied.code).toBe(1);
    expect(copied.stderr).toBe(
      'fs-sandbox: the source is a directory; use cp -r to copy it [invalid_request]\n',
    );
    const made = await runCli(['mkdir', ...flags, join(dir, 'a', 'b')], { user: 'root', env: env() });
    expect(made.code).toBe(1);
    expect(made.stderr).toBe(
      `fs-sandbox: No such file or directory: ${dir}/a (the parent of ${dir}/a/b does not exist; use mkdir -p to create it) [not_found]\n`,
    );
  });

  it('call with a plain path keeps the wire error and says how to write a file: URI', async () => {
    const run = await runCli(['call', 'fs/getMetadata', '{"path":"notes.txt","sandbox":null}'], {
      user: 'root',
      env: env(),
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: -32602,
      message: 'invalid URI: relative URL without a base',
    });
    expect(run.stderr).toContain('write it as a file: URI, e.g. file:///abs/path [invalid_params]');
  });
});
