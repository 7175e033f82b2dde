import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, REPO } from './support/build.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * A client that sends many large sandboxed fs/readFile requests and stops reading its replies must
 * not make the server hold them all: with a reply budget, the server stops starting requests once
 * the finished replies it holds reach the budget. This runs the real `fs-sandbox serve` with a small
 * budget, samples its resident memory while the client is stalled, then reads every reply.
 */

const MiB = 1024 * 1024;
const FILE_BYTES = 24 * MiB;
const FILES = 4;
// Enough that holding every reply (12 x 24 MiB, more again as base64) is over twice the bound on
// what the server may hold (CONCURRENCY + 3 files' worth), so the check below fails if it did.
const REQUESTS = 12;
const CONCURRENCY = 2;
const BUDGET = 16 * MiB;

let dir: string;
const digests: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp('/tmp/fs-sandbox-reply-budget-');
  await mkdir(join(dir, 'data'));
  for (let index = 0; index < FILES; index += 1) {
    // Different bytes in every file and every 4 bytes, so a reply with another file's data shows.
    const data = Buffer.alloc(FILE_BYTES);
    for (let offset = 0; offset < FILE_BYTES; offset += 4)
      data.writeUInt32LE((offset * 2654435761 + index) >>> 0, offset);
    await writeFile(fileOf(index), data);
    digests.push(createHash('sha256').update(data).digest('hex'));
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function fileOf(index: number): string {
  return join(dir, 'data', `f${index}.bin`);
}

function residentMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** Newline-framed replies, kept as raw bytes until a whole line has arrived. */
class LineReader {
  private chunks: Buffer[] = [];
  private readonly lines: Buffer[] = [];
  private wake: (() => void) | null = null;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => this.take(chunk));
    child.once('exit', () => this.wake?.());
  }

  async next(): Promise<Buffer> {
    while (this.lines.length === 0) {
      if (this.child.exitCode !== null) throw new Error('the server exited');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    return this.lines.shift() as Buffer;
  }

  private take(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.chunks.push(chunk.subarray(start, newline));
      this.lines.push(Buffer.concat(this.chunks));
      this.chunks = [];
      start = newline + 1;
    }
    if (start < chunk.length) this.chunks.push(chunk.subarray(start));
    this.wake?.();
  }
}

interface StatsSnapshot {
  requests: { inFlight: number; queued: number; ok: number };
  bytes: { unsent: number };
}

/** The server's statistics, asked for with SIGUSR1 and read from its stderr. */
async function statsOf(child: ChildProcessWithoutNullStreams, stderr: () => string): Promise<StatsSnapshot> {
  const before = stderr().length;
  child.kill('SIGUSR1');
  while (!stderr().slice(before).includes('\n')) await new Promise((resolve) => setTimeout(resolve, 10));
  const line = stderr().slice(before).split('\n')[0] as string;
  return JSON.parse(line.replace('fs-sandbox serve stats: ', '')) as StatsSnapshot;
}

describe('the reply budget of fs-sandbox serve (real process)', () => {
  it('holds memory near the budget while the client does not read, then delivers every reply intact', async () => {
    const child = spawn(
      process.execPath,
      [
        CLI_BIN,
        'serve',
        '--listen',
        'stdio',
        '--pool-size',
        '0',
        '--concurrency',
        String(CONCURRENCY),
        '--max-unsent-bytes',
        String(BUDGET),
        '--max-unsent-bytes-total',
        String(2 * BUDGET),
      ],
      { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const reader = new LineReader(child);
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    try {
      send({ id: 'init', method: 'initialize', params: { clientName: 'reply-budget' } });
      send({ method: 'initialized' });
      expect(JSON.parse((await reader.next()).toString()).result.sessionId).toBeTypeOf('string');
      const baseline = residentMiB(child.pid as number).rss;

      // From here the client reads nothing: stdout stays paused, and the pipe fills.
      child.stdout.pause();
      const sandbox = sandboxContext({ read: [join(dir, 'data')] });
      const requests = Array.from({ length: REQUESTS }, (_, id) => ({
        id,
        method: 'fs/readFile',
        params: { path: uri(fileOf(id % FILES)), sandbox },
      }));
      child.stdin.write(requests.map((request) => `${JSON.stringify(request)}\n`).join(''));

      let stalled: StatsSnapshot | null = null;
      let highest = baseline;
      for (let quiet = 0; quiet < 10; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        highest = Math.max(highest, residentMiB(child.pid as number).rss);
        const now = await statsOf(child, () => stderr);
        const same = stalled !== null && now.requests.ok === stalled.requests.ok;
        quiet = now.requests.inFlight === 0 && same ? quiet + 1 : 0;
        stalled = now;
      }
      const stalledAt = stalled as StatsSnapshot;
      const peak = residentMiB(child.pid as number).peak;
      const finished = stalledAt.requests.ok - 1;
      console.log(
        `stalled client, ${REQUESTS} x ${FILE_BYTES / MiB} MiB reads, budget ${BUDGET / MiB} MiB: ` +
          `${finished} finished, ${stalledAt.requests.queued} waiting, ${(stalledAt.bytes.unsent / MiB).toFixed(0)} MiB unsent; ` +
          `server RSS baseline ${baseline.toFixed(0)} MiB, highest sample ${highest.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB ` +
          `(all replies would be ${(REQUESTS * FILE_BYTES) / MiB} MiB)`,
      );
      // The requests that started before the budget filled finished and are held; the rest wait.
      expect(finished).toBeGreaterThan(0);
      expect(finished).toBeLessThanOrEqual(CONCURRENCY);
      expect(stalledAt.requests.queued).toBe(REQUESTS - finished);
      expect(stalledAt.bytes.unsent).toBeLessThanOrEqual(BUDGET + CONCURRENCY * FILE_BYTES + MiB);
      // What is held is those few files, not the 288 MiB the client asked for.
      expect(peak - baseline).toBeLessThan((CONCURRENCY + 3) * (FILE_BYTES / MiB));

      child.stdout.resume();
      const seen = new Set<number>();
      for (let count = 0; count < REQUESTS; count += 1) {
        const reply = JSON.parse((await reader.next()).toString('latin1')) as {
          id: number;
          result: { dataBase64: string };
        };
        const data = Buffer.from(reply.result.dataBase64, 'base64');
        expect(data.length).toBe(FILE_BYTES);
        expect(createHash('sha256').update(data).digest('hex')).toBe(digests[reply.id % FILES]);
        seen.add(reply.id);
      }
      expect(seen.size).toBe(REQUESTS);
      const drained = await statsOf(child, () => stderr);
      expect(drained.requests).toMatchObject({ inFlight: 0, queued: 0, ok: REQUESTS + 1 });
      expect(drained.bytes.unsent).toBe(0);
    } finally {
      child.stdin.end();
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    }
    expect(child.exitCode).toBe(0);
    expect(
      stderr.split('\n').filter((line) => line !== '' && !line.startsWith('fs-sandbox serve stats: ')),
    ).toEqual([]);
  });
});
