import { spawn } from 'node:child_process';
import { chmod, lchown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './fixtures/conformance/serve-process.js';
import { type CliUser, cliCommand, NOBODY_UID, USERS } from './support/cli.js';
import { codexBinary } from './support/codex-binary.js';
import { MockModel } from './support/mock-model.js';

/**
 * The real Codex client (`codex exec` of the pinned @openai/codex, offline against a mock model)
 * with `fs-sandbox serve` as its only environment (CODEX_HOME/environments.toml, `program`: the
 * served CLI over stdio). The client sends `sandbox: null` for its project discovery (`.git`,
 * `AGENTS.md` up to the project root); with the profile flags those requests run under the
 * server's policy. The project:
 *
 *   proj/.git/                 makes proj the project root the client searches up to
 *   proj/AGENTS.md             outside the policy: must never reach the model
 *   proj/ws/AGENTS.md          the workspace's own: must
 *
 * Without profile flags the same run reads both (the reference's behaviour), which shows the
 * discovery really goes through the served environment.
 */

const CODEX = codexBinary();
const OUTSIDE_MARKER = 'PARENT-INSTRUCTIONS-7731';
const INSIDE_MARKER = 'WORKSPACE-INSTRUCTIONS-4412';

let model: MockModel;

beforeAll(async () => {
  ensureBuilt();
  model = await MockModel.start();
});

afterAll(async () => {
  await model?.close();
});

/** A program run to its end with stdin closed (`codex exec` reads a prompt from an open stdin), killed after `timeoutMs`. */
function run(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

async function chownTree(path: string): Promise<void> {
  await lchown(path, NOBODY_UID, NOBODY_UID);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child);
    else await lchown(child, NOBODY_UID, NOBODY_UID);
  }
}

/** One `codex exec` turn in proj/ws with serve (as `user`, with `serveFlags`) as the environment; what the model was sent. */
async function codexTurn(user: CliUser, serveFlags: (ws: string) => string[]): Promise<string> {
  const base = await mkdtemp('/tmp/fs-sandbox-codex-exec-');
  try {
    const proj = join(base, 'proj');
    const ws = join(proj, 'ws');
    await mkdir(join(proj, '.git'), { recursive: true });
    await mkdir(ws);
    await writeFile(join(proj, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(join(proj, 'AGENTS.md'), `${OUTSIDE_MARKER}\n`);
    await writeFile(join(ws, 'AGENTS.md'), `${INSIDE_MARKER}\n`);
    await chmod(base, 0o755);
    if (user === 'nobody') await chownTree(proj);
    const home = join(base, 'codex-home');
    await mkdir(home);
    const serve = cliCommand(user, ['serve', '--listen', 'stdio', ...serveFlags(ws)]);
    const toml = (value: string) => JSON.stringify(value);
    await writeFile(
      join(home, 'environments.toml'),
      [
        'default = "fs-sandbox"',
        'include_local = false',
        '',
        '[[environments]]',
        'id = "fs-sandbox"',
        `program = ${toml(serve.file)}`,
        `args = [${serve.args.map(toml).join(', ')}]`,
        '',
      ].join('\n'),
    );
    const before = model.requests.length;
    const turn = await run(
      CODEX as string,
      ['exec', '--skip-git-repo-check', ...model.codexConfig(), 'hello'],
      {
        cwd: ws,
        env: {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          CODEX_HOME: home,
          OPENAI_API_KEY: 'offline',
          TMPDIR: base,
        },
        timeoutMs: 60_000,
      },
    );
    expect(turn.code, turn.stderr).toBe(0);
    expect(turn.stdout).toContain('done');
    const sent = model.requests.slice(before).join('\n');
    expect(sent).toContain('"input"');
    return sent;
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

describe.skipIf(CODEX === null)(
  CODEX === null
    ? 'codex exec against serve (skipped: @openai/codex ships no binary for this platform)'
    : 'codex exec with fs-sandbox serve as its environment',
  () => {
    it('without profile flags the discovery reads up to the project root, as the reference does', async () => {
      const sent = await codexTurn('root', () => []);
      expect(sent).toContain(INSIDE_MARKER);
      expect(sent).toContain(OUTSIDE_MARKER);
    });

    it.each(USERS)(
      'as %s, with --profile workspace-write --cwd WS the discovery stays inside the policy',
      async (user) => {
        const sent = await codexTurn(user, (ws) => ['--profile', 'workspace-write', '--cwd', ws]);
        expect(sent).toContain(INSIDE_MARKER);
        expect(sent).not.toContain(OUTSIDE_MARKER);
      },
    );
  },
);
