import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt } from './support/build.js';
import { personPath, runCli } from './support/cli.js';
import { HELPER_RUNTIMES } from './support/helper-runtimes.js';

/**
 * Bun, left to its defaults, would run code and read configuration planted in the sandbox cwd (an
 * agent's workspace): `bunfig.toml` with a preload, `.env` files, a `tsconfig.json` whose `paths`
 * redirect a require, a `node_modules` shadowing a module, BUN_OPTIONS from the broker's
 * environment. Each is planted here and the helper, run under Bun through the real CLI and bwrap,
 * must answer as usual and leave no trace of any; strace shows which of them it opened at all.
 */

const bunInstalled = HELPER_RUNTIMES.includes('bun');
const hasStrace = existsSync('/usr/bin/strace');

let base: string;
let ws: string;

/** The planted code writes a marker beside itself; a marker anywhere in the workspace means it ran. */
const MARKER_CODE = `require('node:fs').writeFileSync(require('node:path').join(__dirname, 'RAN-' + process.pid), 'x');\n`;

beforeAll(() => {
  ensureBuilt();
  base = mkdtempSync('/tmp/fs-sandbox-bun-hardening-');
  ws = join(base, 'ws');
  mkdirSync(join(ws, 'node_modules', 'path'), { recursive: true });
  writeFileSync(join(ws, 'data.txt'), 'hello from the workspace\n');
  writeFileSync(join(ws, 'preload.js'), MARKER_CODE);
  writeFileSync(join(ws, 'bunfig.toml'), 'preload = ["./preload.js"]\n[install]\nauto = "force"\n');
  writeFileSync(join(ws, '.env'), 'NODE_OPTIONS=--require=./preload.js\nFS_SANDBOX_DOTENV=planted\n');
  writeFileSync(join(ws, '.env.local'), 'FS_SANDBOX_DOTENV=planted\n');
  writeFileSync(
    join(ws, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '*': ['./preload.js'] } } }),
  );
  writeFileSync(join(ws, 'node_modules', 'path', 'index.js'), MARKER_CODE);
  writeFileSync(join(ws, 'node_modules', 'path', 'package.json'), '{"name":"path","main":"index.js"}');
});

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({
  PATH: personPath(),
  FS_SANDBOX_HELPER_RUNTIME: 'bun',
  // Bun reads extra command-line flags from BUN_OPTIONS: the allowlist must keep it out.
  BUN_OPTIONS: `--preload=${join(ws, 'preload.js')}`,
  BUN_CONFIG_REGISTRY: 'http://127.0.0.1:9/',
});

function markers(): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(join(dir, entry.name));
      else if (entry.name.startsWith('RAN-')) found.push(join(dir, entry.name));
    }
  };
  visit(ws);
  return found;
}

describe.skipIf(!bunInstalled)('Bun helper hardening (Linux where the Bun helper is built)', () => {
  it('reads and lists the workspace under Bun with none of the planted files taking effect', async () => {
    const read = await runCli(['cat', '--cwd', ws, 'data.txt'], { user: 'root', env: env() });
    expect(read.stderr).toBe('');
    expect(read.stdout).toBe('hello from the workspace\n');
    const listed = await runCli(['ls', '--cwd', ws, '.'], { user: 'root', env: env() });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('bunfig.toml');
    // A write and a tree walk load more of the helper (and would require more modules).
    const wrote = await runCli(['write', '--cwd', ws, 'out.txt', 'written'], { user: 'root', env: env() });
    expect(wrote.code).toBe(0);
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('written');
    rmSync(join(ws, 'out.txt'));
    expect(markers()).toEqual([]);
  });

  it("refuses paths below /$bunfs (the executable's embedded files) instead of answering from them", async () => {
    // The whole disk readable, so nothing but the helper's own check stands in the way.
    for (const args of [
      ['ls', '/$bunfs/root'],
      ['ls', '-l', '/$bunfs/root'],
      ['cat', '/$bunfs/root/x'],
    ]) {
      const run = await runCli([...args, '--cwd', ws, '--profile', 'read-only'], {
        user: 'root',
        env: env(),
      });
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain('[invalid_params]');
      expect(run.stdout, args.join(' ')).not.toContain('helper-bun');
    }
  });

  it.skipIf(!hasStrace)(
    'opens no bunfig.toml, .env, preload or node_modules of the cwd (strace -f; needs /usr/bin/strace)',
    () => {
      const log = join(base, 'openat.log');
      const run = spawnSync(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=openat,open,execve',
          '-o',
          log,
          process.execPath,
          CLI_BIN,
          'cat',
          '--cwd',
          ws,
          'data.txt',
        ],
        { env: env(), encoding: 'utf8', timeout: 60_000 },
      );
      expect(run.stdout).toBe('hello from the workspace\n');
      const lines = readFileSync(log, 'utf8').split('\n');
      const bunPids = new Set(
        lines.filter((line) => /execve\("[^"]*\/helper-bun"/.test(line)).map((line) => line.split(/\s+/)[0]),
      );
      // The Bun helper started once: the read's own helper, under bwrap (a read runs before the
      // deferred self-check, whose answer it is; see the broker's core/deferred-probes.ts).
      expect(bunPids.size).toBe(1);
      const opened = lines
        .filter((line) => bunPids.has(line.split(/\s+/)[0] as string) && /open(at)?\(/.test(line))
        .map((line) => /"([^"]*)"/.exec(line)?.[1] ?? '');
      expect(opened).toContain(join(ws, 'data.txt'));
      // Inside the workspace, or relative to a directory Bun opened (the cwd, by descriptor).
      const fromWorkspace = opened.filter((path) => path.startsWith(`${ws}/`) || !path.startsWith('/'));
      const planted = fromWorkspace.filter((path) =>
        /(^|\/)(bunfig\.toml|\.bunfig\.toml|\.env(\.[a-z]+)?|preload\.js|node_modules)(\/|$)/.test(path),
      );
      expect(planted).toEqual([]);
      expect(markers()).toEqual([]);
    },
  );
});
