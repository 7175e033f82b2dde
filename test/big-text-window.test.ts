import { spawn } from 'node:child_process';
import { chmod, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, cliCommand, USERS, withHelperRuntime } from './support/cli.js';

/**
 * A window of a text file far over the text cap (16 MiB): a 600 MiB log, read through the real CLI
 * and bwrap, as root and as nobody. `read --tail 100` prints the last 100 lines, and the whole
 * process tree (CLI, bwrap, helper) peaks far below the file's size (GNU time's maximum resident
 * size covers every waited-for descendant): the helper streams the file instead of holding it.
 */

const LOG_BYTES = 600 * 1024 * 1024;
const FINAL_LINES = Array.from({ length: 100 }, (_, i) => `final line ${i + 1}\n`).join('');
/** Far below the file: reading it whole would take more than the file's size in memory. */
const MEMORY_BOUND_KIB = 200 * 1024;

let dir: string;
let log: string;
/** Lines of the log, and its size in bytes. */
let totalLines: number;
let sizeBytes: number;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp('/tmp/fs-sandbox-big-text-');
  await chmod(dir, 0o755);
  log = join(dir, 'service.log');
  let block = '';
  for (let i = 0; i < 10_000; i++)
    block += `2026-12-04T16:00:00Z INFO worker ${String(i).padStart(5, '0')} handled a request in 12ms\n`;
  const bytes = Buffer.from(block);
  const blocks = Math.ceil(LOG_BYTES / bytes.length);
  const file = await open(log, 'w', 0o644);
  for (let i = 0; i < blocks; i++) await file.write(bytes);
  await file.write(FINAL_LINES);
  await file.close();
  totalLines = blocks * 10_000 + 100;
  sizeBytes = blocks * bytes.length + FINAL_LINES.length;
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The CLI run under GNU time: its output, exit code and the tree's peak resident size in KiB. */
function measured(
  user: CliUser,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; peakKib: number }> {
  const command = cliCommand(user, args);
  const report = join(dir, `time-${user}.txt`);
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', report, command.file, ...command.args], {
    cwd: dir,
    env: withHelperRuntime({ PATH: '/usr/local/bin:/usr/bin:/bin' }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', async (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, peakKib: Number((await readFile(report, 'utf8')).trim()) });
    }),
  );
}

describe.each(USERS)('as %s', (user) => {
  it('read --tail 100 of a 600 MiB log prints its last 100 lines in bounded memory', async () => {
    const run = await measured(user, ['read', '--tail', '100', 'service.log']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(FINAL_LINES);
    expect(run.peakKib).toBeLessThan(MEMORY_BOUND_KIB);
  });

  it('read --json names the window in the whole file, without the sha256 of 600 MiB', async () => {
    const line = totalLines - 1;
    const run = await measured(user, [
      'read',
      '--json',
      '--line',
      String(line),
      '--limit',
      '5',
      'service.log',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(result).toEqual({
      content: 'final line 99\nfinal line 100\n',
      startLine: line,
      lineCount: 2,
      totalLines,
      truncated: false,
      encoding: 'utf-8',
      bom: false,
      lineEnding: 'lf',
      sizeBytes,
    });
    expect(run.peakKib).toBeLessThan(MEMORY_BOUND_KIB);
  });
});
