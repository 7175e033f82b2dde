import { statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { callMethod, personPath, runCli } from './support/cli.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * The human output of the CLI through the real sandbox: `ls -l` tells a symlink from a directory,
 * `--json` is the wire result, `mkdir -p` makes nested directories, `walk` lists a tree, and names
 * with control characters stay escaped. Every run names its sandbox explicitly (`--profile
 * workspace-write --cwd DIR`), so none depends on the CLI's default.
 */

const CLEAR = 'clear\u001b[2J';
let base: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-output-');
  await mkdir(join(base, 'tree', 'sub', 'deep'), { recursive: true });
  await writeFile(join(base, 'tree', 'a.txt'), 'hello\n');
  await writeFile(join(base, 'tree', 'sub', 'deep', CLEAR), 'x');
  await mkdir(join(base, 'tree', `dir${CLEAR}`));
  await symlink('sub', join(base, 'tree', 'link'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const env = { PATH: personPath() };
const cli = (args: string[]) =>
  runCli([...args.slice(0, 1), '--profile', 'workspace-write', '--cwd', base, ...args.slice(1)], {
    user: 'root',
    env,
  });
/** A character a terminal could act on (newlines aside: they are the output's own lines). */
const hasRawControl = (text: string) =>
  [...text.replaceAll('\n', '')].some((char) => {
    const code = char.codePointAt(0) as number;
    return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
  });

describe('human output of the CLI (real sandbox)', () => {
  it('ls -l marks a symlink to a directory l with its resolved path, and a directory d', async () => {
    const tree = join(base, 'tree');
    const run = await cli(['ls', '-l', tree]);
    expect(run.code, run.stderr).toBe(0);
    expect(hasRawControl(run.stdout)).toBe(false);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line[0])).toEqual(['-', 'd', 'l', 'd']);
    const time = '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}';
    const mode = (path: string) => {
      const bits = statSync(path).mode;
      return ['r', 'w', 'x', 'r', 'w', 'x', 'r', 'w', 'x']
        .map((letter, index) => (bits & (0o400 >> index) ? letter : '-'))
        .join('');
    };
    expect(lines[0]).toMatch(new RegExp(`^-${mode(join(tree, 'a.txt'))} +6 ${time} a\\.txt$`));
    expect(lines[1]).toMatch(new RegExp(`^d[-rwx]{9} +\\d+ ${time} dirclear\\\\x1b\\[2J$`));
    expect(lines[2]).toMatch(new RegExp(`^lrwxrwxrwx +\\d+ ${time} link -> ${tree}/sub$`));
    expect(lines[3]).toMatch(new RegExp(`^d${mode(join(tree, 'sub'))} +\\d+ ${time} sub$`));
  });

  it('--json prints the wire result of ls, stat and cat', async () => {
    const tree = join(base, 'tree');
    const sandbox = sandboxContext({ read: [base] });
    for (const [verb, method, path] of [
      ['ls', 'fs/readDirectory', tree],
      ['stat', 'fs/getMetadata', join(tree, 'a.txt')],
      ['cat', 'fs/readFile', join(tree, 'a.txt')],
    ] as const) {
      const run = await cli([verb, '--json', path]);
      expect(run.code, run.stderr).toBe(0);
      const wire = await callMethod(method, { path: uri(path), sandbox }, { user: 'root', env });
      expect(JSON.parse(run.stdout), verb).toEqual(wire.result);
    }
    const cat = await cli(['cat', '--json', join(tree, 'a.txt')]);
    expect(JSON.parse(cat.stdout)).toEqual({ dataBase64: Buffer.from('hello\n').toString('base64') });
    const made = await cli(['mkdir', '--json', join(base, 'made')]);
    expect(JSON.parse(made.stdout)).toEqual({});
  });

  it('mkdir -p makes nested directories on the host; mkdir without -p needs the parent', async () => {
    const nested = join(base, 'p', 'q', 'r');
    const plain = await cli(['mkdir', nested]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('[not_found]');
    const run = await cli(['mkdir', '-p', nested]);
    expect(run.code, run.stderr).toBe(0);
    expect((await stat(nested)).isDirectory()).toBe(true);
    expect((await cli(['mkdir', '-p', nested])).code).toBe(0);
  });

  it('walk (and tree) lists the tree relative to PATH, directories with /, names escaped', async () => {
    const tree = join(base, 'tree');
    const run = await cli(['walk', tree]);
    expect(run.code, run.stderr).toBe(0);
    expect(hasRawControl(run.stdout)).toBe(false);
    // The symlink is listed (marked @), never followed.
    expect(run.stdout).toBe(
      ['a.txt', 'dirclear\\x1b[2J/', 'link@', 'sub/', 'sub/deep/', 'sub/deep/clear\\x1b[2J', ''].join('\n'),
    );
    const shallow = await cli(['tree', '--max-depth', '1', tree]);
    expect(shallow.stdout).toBe(['a.txt', 'dirclear\\x1b[2J/', 'link@', 'sub/', ''].join('\n'));
  });
});
