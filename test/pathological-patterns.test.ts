import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { runCli } from './support/cli.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * Patterns a model or a policy can send that a backtracking matcher takes minutes on
 * (`**` + `/*a*a*a*a*a*a*a*a*a*a*a*a*b` against long names of `a`s): each must answer, with a
 * result or a typed error, while the same server goes on answering other requests. The bounds
 * here are the issue's (15 s for the pattern, 5 s for the other call): generous deadlines that a
 * matcher going exponential never meets, not timing targets.
 */

const CATASTROPHIC = '**/*a*a*a*a*a*a*a*a*a*a*a*a*b';
const LONG = 'a'.repeat(200);

let dir: string;
let ws: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync('/tmp/fs-sandbox-patterns-');
  ws = join(dir, 'ws');
  mkdirSync(join(ws, LONG, LONG, LONG), { recursive: true });
  for (let i = 0; i < 50; i++) writeFileSync(join(ws, LONG, `${LONG}${i}`), 'x');
  writeFileSync(join(ws, LONG, LONG, LONG, `${LONG}b`), 'x');
  writeFileSync(join(ws, 'notes.txt'), 'notes\n');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a catastrophic deny glob', () => {
  it('answers through serve while another request on the same server answers', async () => {
    const serve = ServeProcess.start([], { cwd: ws });
    await serve.handshake();
    const withGlob = sandboxContext({ write: [ws], deny: [] }) as unknown as {
      permissions: { file_system: { entries: unknown[] } };
    };
    withGlob.permissions.file_system.entries.push({
      path: { type: 'glob_pattern', pattern: `${ws}/${CATASTROPHIC}` },
      access: 'deny',
    });
    const started = Date.now();
    const pathological = serve.request('fs/readFile', {
      path: uri(join(ws, 'notes.txt')),
      sandbox: withGlob,
    });
    const other = serve.request('fs/readFile', {
      path: uri(join(ws, 'notes.txt')),
      sandbox: sandboxContext({ read: [ws] }),
    });
    const otherReply = await other;
    const otherMs = Date.now() - started;
    const reply = await pathological;
    const patternMs = Date.now() - started;
    expect(otherReply.result?.dataBase64).toBe(Buffer.from('notes\n').toString('base64'));
    expect(reply.result?.dataBase64, JSON.stringify(reply)).toBe(Buffer.from('notes\n').toString('base64'));
    expect(otherMs).toBeLessThan(5_000);
    expect(patternMs).toBeLessThan(15_000);
    // The match below the long names is masked: its read is refused.
    const masked = await serve.request('fs/readFile', {
      path: uri(join(ws, LONG, LONG, LONG, `${LONG}b`)),
      sandbox: withGlob,
    });
    expect(masked.error?.data.errorKind).toBe('permission_denied');
    expect(await serve.stop()).toBe(0);
    console.log(`catastrophic deny glob through serve: ${patternMs} ms; the other read: ${otherMs} ms`);
  });

  it('answers through the CLI', async () => {
    const run = await runCli(['cat', '--cwd', ws, '--deny', CATASTROPHIC, 'notes.txt'], {
      user: 'root',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      timeoutMs: 15_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('notes\n');
    console.log(`catastrophic deny glob through the CLI: ${Math.round(run.ms)} ms`);
  });
});
