import { readdirSync, readFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import { FsError } from '@fs-sandbox/policy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LaunchSpec } from '../src/backends/backend.js';
import { launchCommand } from '../src/backends/launch-command.js';
import { launchKey } from '../src/pool/launch-key.js';
import { resolvePoolOptions } from '../src/pool/pool-options.js';
import { spareLaunch } from '../src/pool/spare-launch.js';
import { SPAWNER_ANSWER_MS, Spawner } from '../src/pool/spawner.js';
import { WarmPool } from '../src/pool/warm-pool.js';
import { directLaunch } from './support/launches.js';
import { isAlive, until } from './support/processes.js';

/**
 * The pool against a fake helper: a node script that records its pid when it starts, waits for its
 * whole request like the real helper, and answers with facts about itself. A helper that waited
 * longer than STALE_AFTER_MS before its request answers "stale", as a warm helper whose view went
 * out of date would.
 */

let dir: string;
let script: string;
const pools: WarmPool[] = [];

const FAKE_HELPER = `
const fs = require('fs');
const started = Date.now();
// Written aside and renamed: a test that lists the directory never reads a file not yet written.
fs.writeFileSync(process.env.PID_DIR + '/' + process.pid + '.part', String(started));
fs.renameSync(process.env.PID_DIR + '/' + process.pid + '.part', process.env.PID_DIR + '/' + process.pid);
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8').split('\\n')[0]);
  const waited = Date.now() - started;
  if (request.params.hang) { setInterval(() => {}, 1000); return; }
  // No sooner than readyAfterMs after it started: a cold helper is slow, a spare answers at once.
  setTimeout(() => answer(request, waited), Math.max(0, (request.params.readyAfterMs ?? 0) - waited));
});
function answer(request, waited) {
  if (request.params.staleAfterMs !== undefined && waited > request.params.staleAfterMs) {
    process.stdout.write(JSON.stringify({ status: 'error', payload: { code: -32603,
      message: 'sandbox view is stale: /w changed since the helper started',
      data: { errorKind: 'helper_failed', stale: true } } }) + '\\n');
    return;
  }
  process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/getMetadata',
    response: { pid: process.pid, started, waited, freshness: request.freshness ?? null,
      execArgv: process.execArgv, args: process.argv.slice(2) } } }) + '\\n');
}`;

interface FakeResponse {
  pid: number;
  started: number;
  waited: number;
  freshness: Array<{ path: string; dev: string; ino: string }> | null;
  /** node's own flags and the helper program's arguments, as the process got them. */
  execArgv: string[];
  args: string[];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-pool-'));
  script = join(dir, 'fake-helper.cjs');
  await writeFile(script, FAKE_HELPER);
});

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let launches = 0;
async function fakeLaunch(extra: Partial<LaunchSpec> = {}): Promise<LaunchSpec & { pidDir: string }> {
  launches += 1;
  const pidDir = join(dir, `pids-${launches}`);
  await mkdir(pidDir);
  // env(1) stands in for the sandbox program: it execs node, so the pid is the helper's.
  return {
    ...directLaunch({
      sandboxProgram: '/usr/bin/env',
      runtime: process.execPath,
      helper: script,
      env: { PID_DIR: pidDir },
    }),
    pidDir,
    ...extra,
  };
}

function newPool(options: { size?: number; perKey?: number; idleMs?: number } = {}): WarmPool {
  const pool = new WarmPool({ size: 4, perKey: 2, idleMs: 30_000, ...options });
  pools.push(pool);
  return pool;
}

const request = (params: Record<string, unknown> = {}): HelperRequest => ({
  operation: 'fs/getMetadata',
  params,
});

function responseOf(reply: HelperReply): FakeResponse {
  if (reply.status !== 'ok') throw new Error(`expected an ok reply, got ${JSON.stringify(reply)}`);
  return reply.payload.response as unknown as FakeResponse;
}

function pidsStarted(pidDir: string): number[] {
  return readdirSync(pidDir)
    .filter((name) => !name.endsWith('.part'))
    .map(Number);
}

/** When a fake helper started, as it recorded in its pid file. */
function startedAt(pidDir: string, pid: number): number {
  return Number(readFileSync(join(pidDir, String(pid)), 'utf8'));
}

describe('warm pool', () => {
  it('serves the first call cold, then calls from helpers spawned ahead (one request each)', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    const coldStarted = Date.now();
    const first = responseOf(await pool.launch(launch, request(), {}));
    const coldMs = Date.now() - coldStarted;
    expect(pool.stats()).toMatchObject({ hits: 0, misses: 1 });
    await until(() => pool.stats().warm === 2 && pidsStarted(launch.pidDir).length === 3, 'two spares');
    // Older than a start (the cold call's spawn to reply) and than 100 ms: the second call finds a
    // ready spare, not one mid-start, which would keep the shape deeper (on a loaded machine a
    // fixed 100 ms pause was shorter than the cold start).
    const spawnedAt = Math.max(...pidsStarted(launch.pidDir).map((pid) => startedAt(launch.pidDir, pid)));
    await until(
      () => Date.now() - spawnedAt > Math.max(coldMs, 100) + 20,
      'the spares to be older than a start',
    );
    const second = responseOf(await pool.launch(launch, request(), {}));
    const third = responseOf(await pool.launch(launch, request(), {}));
    expect(pool.stats()).toMatchObject({ hits: 2, misses: 1, staleRetries: 0 });
    // Spawned before the call and waiting for it, and never reused.
    expect(second.waited).toBeGreaterThanOrEqual(90);
    expect(new Set([first.pid, second.pid, third.pid]).size).toBe(3);
    // Only spares compile eagerly and rehearse; the cold run keeps node's and the helper's defaults.
    expect([first.execArgv, first.args]).toEqual([[], []]);
    expect([second.execArgv, second.args]).toEqual([['--no-lazy'], ['--warm-up']]);
    // Each taken spare is replaced once its reply is back; the third call took the shape's last
    // spare, so the shape is kept one deeper.
    await until(() => pool.stats().warm === 3, 'the spares to be replaced');
    expect(pool.stats().spawned).toBe(6);
  });

  it('serves awaited back-to-back calls from spares after the first two, with no yield between them', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    // Each call is sent as soon as the one before resolves, before any setImmediate runs: the
    // second finds no spare and runs cold, and the refill the first reply decided on must still
    // happen while it runs.
    for (let i = 0; i < 12; i++) responseOf(await pool.launch(launch, request(), {}));
    expect(pool.stats()).toMatchObject({ hits: 10, misses: 2, staleRetries: 0 });
  });

  it('keys spares by the exact launch (argv and environment)', async () => {
    const pool = newPool({ perKey: 1 });
    const a = await fakeLaunch();
    const b = await fakeLaunch();
    await pool.launch(a, request(), {});
    await until(() => pool.stats().warm === 1, 'a spare for a');
    await pool.launch(b, request(), {});
    expect(pool.stats()).toMatchObject({ hits: 0, misses: 2 });
    await until(() => pool.stats().warm === 2, 'a spare for b');
    expect(pool.stats().keys).toBe(2);
    await pool.launch({ ...a, helperArgs: ['x'] }, request(), {});
    expect(pool.stats().misses).toBe(3);
    await pool.launch(a, request(), {});
    expect(pool.stats().hits).toBe(1);
  });

  it('never keeps more than its size in total, evicting the least recently used shape', async () => {
    const pool = newPool({ size: 3, perKey: 2 });
    const a = await fakeLaunch();
    const b = await fakeLaunch();
    await pool.launch(a, request(), {});
    await until(() => pool.stats().warm === 2, 'spares for a');
    await pool.launch(b, request(), {});
    await until(() => pool.stats().evicted === 1 && pool.stats().warm === 3, 'room made for b');
    expect(pool.stats().keys).toBe(2);
    expect(pool.stats().warm).toBeLessThanOrEqual(3);
  });

  it('kills spares nobody used within idleMs, so an idle pool shrinks to zero', async () => {
    const pool = newPool({ idleMs: 400 });
    const launch = await fakeLaunch();
    await pool.launch(launch, request(), {});
    await until(() => pidsStarted(launch.pidDir).length === 3, 'two spares to start');
    await until(() => pool.stats().expired === 2, 'the spares to expire');
    await until(() => pool.stats().live === 0, 'no live helper');
    expect(pool.stats()).toMatchObject({ warm: 0, keys: 0 });
    for (const pid of pidsStarted(launch.pidDir)) expect(isAlive(pid)).toBe(false);
  });

  it('retries a stale warm helper once with a new one and drops the other spares of that shape', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    await pool.launch(launch, request(), {});
    await until(() => pool.stats().warm === 2, 'two spares');
    // Stale by their own clocks: every spare started (as it recorded) more than 200 ms ago. On a
    // loaded machine a spare's process can start well after the pool counted it.
    await until(
      () =>
        pidsStarted(launch.pidDir).length === 3 &&
        pidsStarted(launch.pidDir).every((pid) => Date.now() - startedAt(launch.pidDir, pid) > 250),
      'the spares to be older than staleAfterMs',
    );
    const reply = responseOf(await pool.launch(launch, request({ staleAfterMs: 200 }), {}));
    // Answered by a helper that got its request at once: the cold retry.
    expect(reply.waited).toBeLessThan(200);
    expect(pool.stats()).toMatchObject({ hits: 0, misses: 1, staleRetries: 1 });
    // 1 cold, 2 spares, 1 retry; then the shape is topped up with 2 new spares.
    await until(() => pidsStarted(launch.pidDir).length === 6, 'new spares');
    expect(pool.stats().warm).toBe(2);
  });

  it("sends each bound root's device and inode as the request's freshness, to warm helpers only", async () => {
    const pool = newPool({ perKey: 1 });
    const root = await mkdtemp(join(dir, 'root-'));
    const launch = await fakeLaunch({ boundRoots: [root] });
    const cold = responseOf(await pool.launch(launch, request(), {}));
    expect(cold.freshness).toBeNull();
    await until(() => pool.stats().warm === 1, 'a spare');
    const warm = responseOf(await pool.launch(launch, request(), {}));
    const stats = await lstat(root, { bigint: true });
    expect(warm.freshness).toEqual([{ path: root, dev: stats.dev.toString(), ino: stats.ino.toString() }]);
  });

  it('starts a new helper when a bound root cannot be looked at (freshness unprovable)', async () => {
    const pool = newPool({ perKey: 1 });
    const launch = await fakeLaunch({ boundRoots: [join(dir, 'no-such-root')] });
    await pool.launch(launch, request(), {});
    await until(() => pool.stats().warm === 1, 'a spare');
    const reply = responseOf(await pool.launch(launch, request(), {}));
    expect(reply.freshness).toBeNull();
    expect(pool.stats()).toMatchObject({ hits: 0, misses: 2 });
  });

  it('keeps a shape deeper than perKey while back-to-back calls outpace its spares, within size', async () => {
    const pool = newPool({ size: 4, perKey: 2, idleMs: 2_000 });
    const launch = await fakeLaunch();
    // A start takes at least 1 s here (the cold call's spawn to reply): the spares the cold call's
    // reply starts are then both taken while younger than a start, demand outpacing supply, even
    // when a loaded machine stalls the spawns between them.
    responseOf(await pool.launch(launch, request({ readyAfterMs: 1_000 }), {}));
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.stats().warm).toBe(2);
    const replies = [pool.launch(launch, request(), {}), pool.launch(launch, request(), {})];
    // Checked at the first reply's refill: under load the second reply may come later than idleMs,
    // when the spares made for the first have already idled out.
    responseOf(await Promise.race(replies));
    await until(() => pool.stats().warm === 4, 'the shape to be kept 4 deep');
    for (const reply of await Promise.all(replies)) responseOf(reply);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pool.stats().warm).toBeLessThanOrEqual(4);
    // Idle, the extra spares expire and are not replaced.
    await until(() => pool.stats().warm === 0, 'the idle spares to expire', 15_000);
  });

  it('refills without the warm-up while calls take spares mid-start, and warms up again once one is found ready', async () => {
    const pool = newPool({ size: 4, perKey: 2, idleMs: 30_000 });
    const launch = await fakeLaunch();
    const warmedUp = (pid: number) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--warm-up');
    const newPids = (known: Set<number>) => pidsStarted(launch.pidDir).filter((pid) => !known.has(pid));
    // A start takes at least 300 ms here (the cold call's spawn to reply, what the pool takes for a
    // start): a spare younger than that is mid-start.
    const coldStarted = Date.now();
    const cold = responseOf(await pool.launch(launch, request({ readyAfterMs: 300 }), {}));
    const coldMs = Date.now() - coldStarted;
    const allStarted = () => pidsStarted(launch.pidDir).length === pool.stats().spawned;
    await until(() => pool.stats().spawned === 3 && allStarted(), 'two spares');
    const known = new Set(pidsStarted(launch.pidDir));
    for (const pid of known) if (pid !== cold.pid) expect(warmedUp(pid)).toBe(true);
    // Taken at once, mid-start: the refills skip the warm-up.
    const hurried = responseOf(await pool.launch(launch, request(), {}));
    expect(hurried.args).toEqual(['--warm-up']);
    await until(() => newPids(known).length > 0 && allStarted(), 'a refill');
    const lean = newPids(known);
    for (const pid of lean) expect([pid, warmedUp(pid)]).toEqual([pid, false]);
    for (const pid of lean) known.add(pid);
    // A spare older than a start is ready: the refill after its call warms up again.
    const oldest = Math.max(...[...known].map((pid) => startedAt(launch.pidDir, pid)));
    await until(() => Date.now() - oldest > coldMs + 50, 'every spare to be older than a start');
    responseOf(await pool.launch(launch, request(), {}));
    await until(() => newPids(known).length > 0 && allStarted(), 'the next refill');
    for (const pid of newPids(known)) expect([pid, warmedUp(pid)]).toEqual([pid, true]);
  });

  it('serves more concurrent calls than it has spares, all correctly', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    await pool.launch(launch, request(), {});
    await until(() => pool.stats().warm === 2, 'two spares');
    const replies = await Promise.all(
      Array.from({ length: 7 }, () => pool.launch(launch, request(), {}).then(responseOf)),
    );
    expect(new Set(replies.map((reply) => reply.pid)).size).toBe(7);
    expect(pool.stats()).toMatchObject({ hits: 2, misses: 6 });
  });

  it('starts no spare while calls of a shape run cold (a burst), and refills once the last is done', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    await pool.launch(launch, request(), {});
    await until(() => pool.stats().warm === 2, 'two spares');
    // The first cold helper and both spares have started: their pids are known before the burst.
    await until(() => pidsStarted(launch.pidDir).length === 3, 'the spares to start');
    const before = new Set(pidsStarted(launch.pidDir));
    const answeredAt = new Map<number, number>();
    const replies = await Promise.all(
      Array.from({ length: 6 }, () =>
        pool.launch(launch, request({ readyAfterMs: 400 }), {}).then((reply) => {
          const response = responseOf(reply);
          answeredAt.set(response.pid, Date.now());
          return response;
        }),
      ),
    );
    expect(pool.stats()).toMatchObject({ hits: 2, misses: 5 });
    const burst = new Set(replies.map((reply) => reply.pid));
    // The rule is about the cold runs: a spare's own reply may come last on a loaded machine.
    const lastReply = Math.max(...[...answeredAt].filter(([pid]) => !before.has(pid)).map(([, at]) => at));
    // The two spares answered at once, four cold helpers 400 ms later: spares started in between
    // would only have competed with those four.
    const refilled = () => pidsStarted(launch.pidDir).filter((pid) => !before.has(pid) && !burst.has(pid));
    await until(() => refilled().length >= 2, 'the refill after the burst');
    for (const pid of refilled()) {
      const started = Number(readFileSync(join(launch.pidDir, String(pid)), 'utf8'));
      expect(started).toBeGreaterThanOrEqual(lastReply - 5);
    }
  });

  it('survives a spare whose spawn throws: no spare, and the next call gets the error', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    responseOf(await pool.launch(launch, request(), {}));
    // Before the refill runs (it is scheduled after the reply), every spawn of this launch starts
    // throwing at once, as node's spawn does for an environment value holding a NUL byte.
    launch.env.BROKEN = 'a\0b';
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pool.stats()).toMatchObject({ warm: 0, keys: 0 });
    await expect(pool.launch(launch, request(), {})).rejects.toThrow(/null bytes/);
  });

  it('does not hand out a spare that died while waiting', async () => {
    const pool = newPool({ perKey: 1 });
    const launch = await fakeLaunch();
    const first = responseOf(await pool.launch(launch, request(), {}));
    await until(() => pidsStarted(launch.pidDir).length === 2, 'a spare');
    const spare = pidsStarted(launch.pidDir).find((pid) => pid !== first.pid) as number;
    process.kill(spare, 'SIGKILL');
    await until(() => pool.stats().died === 1, 'the death to be noticed');
    const next = responseOf(await pool.launch(launch, request(), {}));
    expect(next.pid).not.toBe(spare);
    expect(pool.stats()).toMatchObject({ hits: 0, misses: 2 });
  });

  it('kills waiting and running helpers on close, and spawns no more', async () => {
    const pool = newPool();
    const launch = await fakeLaunch();
    await pool.launch(launch, request(), {});
    await until(() => pidsStarted(launch.pidDir).length === 3, 'two spares');
    const hanging = pool.launch(launch, request({ hang: true }), {}).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await pool.close();
    expect(await hanging).toBeInstanceOf(FsError);
    expect(pool.stats().live).toBe(0);
    for (const pid of pidsStarted(launch.pidDir)) expect(isAlive(pid)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pidsStarted(launch.pidDir).length).toBe(3);
  });
});

describe('pool options', () => {
  it('turns the pool off with false or a size of 0, and bounds every value', () => {
    expect(resolvePoolOptions(false)).toBeNull();
    expect(resolvePoolOptions({ size: 0 })).toBeNull();
    expect(resolvePoolOptions(undefined)).toEqual({ size: 4, perKey: 2, idleMs: 30_000 });
    expect(resolvePoolOptions({ size: 1 })).toEqual({ size: 1, perKey: 1, idleMs: 30_000 });
    expect(() => resolvePoolOptions({ size: -1 })).toThrow(/pool size must be an integer from 0 to 64/);
    expect(() => resolvePoolOptions({ idleMs: 1.5 })).toThrow(/pool idleMs/);
  });

  it('gives a spare node --no-lazy and the helper --warm-up, and nothing else', () => {
    const bwrap: LaunchSpec = {
      backend: 'bwrap',
      sandboxProgram: '/usr/bin/bwrap',
      sandboxArgs: ['--setenv', 'TMPDIR', '--', '--'],
      runtime: '/usr/bin/node',
      runtimeKind: 'node',
      runtimeArgs: [],
      helper: '/h.cjs',
      helperArgs: [],
      mountPoints: ['/w'],
      boundRoots: ['/w'],
      env: {},
    };
    const spare = spareLaunch(bwrap);
    expect(spare).toEqual({ ...bwrap, runtimeArgs: ['--no-lazy'], helperArgs: ['--warm-up'] });
    // Placed by the parts, whatever the sandbox's own arguments look like (here a stray `--`).
    expect(launchCommand(spare).args).toEqual([
      '--setenv',
      'TMPDIR',
      '--',
      '--',
      '/usr/bin/node',
      '--no-lazy',
      '/h.cjs',
      '--expect-mounts',
      '/w',
      '--warm-up',
    ]);
  });

  it.runIf(Spawner.supported)(
    'runs calls cold while its spawner does not answer (stopped), and closes without it',
    async () => {
      const pool = newPool({ size: 4, perKey: 2, idleMs: 30_000 });
      const launch = await fakeLaunch();
      responseOf(await pool.launch(launch, request(), {}));
      // The first refill starts the spawner; its spares are this process's own until it listens.
      const spawner = () => (pool as unknown as { spawner: Spawner | null }).spawner;
      await until(() => spawner()?.listening === true && pool.stats().warm === 2, 'the spawner to listen');
      const spawnerPid = spawner()?.pid as number;
      process.kill(spawnerPid, 'SIGSTOP');
      try {
        // These take the two spares made before it listened; their refills go to the stopped spawner.
        responseOf(await pool.launch(launch, request(), {}));
        responseOf(await pool.launch(launch, request(), {}));
        await until(
          () => spawner()?.stalled === true,
          'the spawner to count as stalled',
          SPAWNER_ANSWER_MS * 5,
        );
        const misses = pool.stats().misses;
        const started = Date.now();
        // Not handed a spare the spawner never started: run cold, answered at once.
        responseOf(await pool.launch(launch, request(), { timeoutMs: 20_000 }));
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(pool.stats().misses).toBe(misses + 1);
        // Its refill is this process's own spawn again: the next call is served warm.
        await until(() => pool.stats().warm > 0 && pidsStarted(launch.pidDir).length >= 4, 'a local spare');
        const hits = pool.stats().hits;
        responseOf(await pool.launch(launch, request(), {}));
        expect(pool.stats().hits).toBe(hits + 1);
        // close() does not wait on exits the stopped spawner would relay: it kills it.
        const closing = Date.now();
        await pool.close();
        expect(Date.now() - closing).toBeLessThan(SPAWNER_ANSWER_MS + 5_000);
        await until(() => !isAlive(spawnerPid), 'the stalled spawner to be killed');
      } finally {
        try {
          process.kill(spawnerPid, 'SIGCONT');
        } catch {
          // Killed by close().
        }
      }
    },
    30_000,
  );
});

describe('launch key', () => {
  const launch: LaunchSpec = {
    backend: 'bwrap',
    sandboxProgram: '/usr/bin/bwrap',
    sandboxArgs: ['--bind', '/w', '/w', '--'],
    runtime: '/usr/bin/node',
    runtimeKind: 'node',
    runtimeArgs: [],
    helper: '/h.cjs',
    helperArgs: [],
    mountPoints: ['/w'],
    boundRoots: ['/w'],
    env: { PATH: '/usr/bin' },
    details: { note: 'shown by explain only' },
  };

  it('changes with every part that shapes the sandbox, and with nothing else', () => {
    const key = launchKey(launch);
    for (const change of [
      { sandboxProgram: '/opt/bwrap' },
      { sandboxArgs: ['--ro-bind', '/w', '/w', '--'] },
      { runtime: '/opt/node' },
      { runtimeArgs: ['--no-lazy'] },
      { helper: '/other.cjs' },
      { helperArgs: ['--warm-up'] },
      { mountPoints: ['/w', '/w/.env'] },
      { boundRoots: ['/w', '/x'] },
      { env: { PATH: '/bin' } },
      { backend: 'seatbelt' as const },
    ]) {
      expect(launchKey({ ...launch, ...change }), JSON.stringify(change)).not.toBe(key);
    }
    expect(launchKey({ ...launch, details: {}, env: { PATH: '/usr/bin' } })).toBe(key);
  });
});
