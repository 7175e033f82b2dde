import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, ServeProcess } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { sandboxContext, until, uri, waitingHelpers, waitingHelpersUnder } from './support/pool.js';

/**
 * Warm helpers never outlive the broker that spawned them: not after close(), not when a library
 * user simply lets the process end, and not when the broker is SIGKILLed (bwrap's
 * --die-with-parent). The pool's work is visible in the server's statistics.
 */

let dir: string;
let sandbox: Record<string, unknown>;
let file: string;

beforeAll(() => {
  ensureBuilt();
});

beforeEach(async () => {
  dir = await mkdtemp('/tmp/fs-sandbox-pool-life-');
  mkdirSync(join(dir, 'ws'));
  file = join(dir, 'ws', 'a.txt');
  writeFileSync(file, 'a');
  sandbox = sandboxContext({ write: [join(dir, 'ws')] });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** bwrap and helper processes of this test that are still running, as `ps` lists them. */
function survivors(): string[] {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('Z'))
    .filter((line) => line.includes(dir) && /\bbwrap\b|helper\.cjs/.test(line));
}

/** The pool spawner processes of the broker `pid` (pool/spawner.ts names them so). */
function spawnersOf(pid: number): number[] {
  return execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => !fields[1]?.startsWith('Z') && fields.at(-2) === 'fs-sandbox-pool-spawner')
    .filter((fields) => fields.at(-1) === String(pid))
    .map((fields) => Number(fields[0]));
}

describe('warm helper lifecycle', () => {
  it('a SIGKILLed server holding warm helpers leaves no bwrap, helper or spawner process behind', async () => {
    const served = ServeProcess.start(['--pool-size', '4', '--pool-per-key', '3']);
    await served.handshake();
    const pid = served.child.pid as number;
    const reply = await served.request('fs/getMetadata', { path: uri(file), sandbox });
    expect(reply.result).toMatchObject({ isFile: true });
    await until(() => waitingHelpers(dir).length === 3, 'three warm spares');
    // The first refill is the server's own spawn; the pool's spawner makes the later ones, once it listens.
    await until(() => spawnersOf(pid).length === 1, 'the pool spawner');
    const spawner = spawnersOf(pid)[0] as number;
    for (const deadline = Date.now() + 10_000; waitingHelpersUnder(spawner).length === 0; ) {
      if (Date.now() > deadline) throw new Error('no spare started by the spawner within 10 s');
      await served.request('fs/getMetadata', { path: uri(file), sandbox });
      await until(() => waitingHelpers(dir).length === 3, 'three warm spares');
    }
    expect(survivors().length).toBeGreaterThanOrEqual(6);
    served.child.kill('SIGKILL');
    await served.exited;
    await until(() => survivors().length === 0, 'the spares to die with their broker', 10_000);
    await until(() => spawnersOf(pid).length === 0, 'the spawner to end with its broker', 5_000);
  });

  it('a library user that never calls close() still exits, and its warm helpers go with it', async () => {
    const script = `
      import { createBroker } from '@fs-sandbox/broker';
      const broker = createBroker();
      const sandbox = ${JSON.stringify(sandbox)};
      await broker.call('fs/getMetadata', { path: ${JSON.stringify(uri(file))}, sandbox });
      // Both spares started (20 ms at a time, 10 s at most) before the script ends; the second
      // call's refill is the pool spawner's.
      for (const round of [1, 2]) {
        if (round === 2) await broker.call('fs/getMetadata', { path: ${JSON.stringify(uri(file))}, sandbox });
        for (const deadline = Date.now() + 10_000; broker.poolStats().warm < 2; ) {
          if (Date.now() > deadline) throw new Error('two warm spares did not start within 10 s');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      process.stdout.write(JSON.stringify({ ...broker.poolStats(), pid: process.pid }));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(REPO_ROOT, 'bench'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(code).toBe(0);
    // The spares were there, waiting, when the script ended.
    const stats = JSON.parse(stdout);
    expect(stats).toMatchObject({ hits: 1, misses: 1 });
    // Two, or three when the second call found its spare still starting (the shape surged).
    expect(stats.warm).toBeGreaterThanOrEqual(2);
    await until(() => survivors().length === 0, 'the exit hook to kill the spares', 5_000);
    await until(() => spawnersOf(stats.pid).length === 0, 'the spawner to end with its broker', 5_000);
  });

  it('shows the pool in the serve statistics, and closing the server kills its spares', async () => {
    const served = ServeProcess.start(['--stats', '--pool-idle-ms', '60000']);
    await served.handshake();
    await served.request('fs/getMetadata', { path: uri(file), sandbox });
    await until(() => waitingHelpers(dir).length === 2, 'two warm spares');
    const warm = await served.request('fs/readFile', { path: uri(file), sandbox });
    expect(warm.result).toEqual({ dataBase64: 'YQ==' });
    expect(await served.stop()).toBe(0);
    const line = served.stderr.split('\n').find((text) => text.startsWith('fs-sandbox serve stats: '));
    const stats = JSON.parse((line as string).replace('fs-sandbox serve stats: ', ''));
    expect(stats.sources.pool).toMatchObject({
      options: { size: 4, perKey: 2, idleMs: 60_000 },
      hits: 1,
      misses: 1,
      expired: 0,
      staleRetries: 0,
      live: 0,
    });
    expect(stats.sources.pool.spawned).toBeGreaterThanOrEqual(3);
    expect(survivors()).toEqual([]);
    await until(() => spawnersOf(served.child.pid as number).length === 0, 'the spawner to end', 5_000);
  });

  it('serves without spares when the pool is off (--pool-size 0)', async () => {
    const served = ServeProcess.start(['--stats', '--pool-size', '0']);
    await served.handshake();
    await served.request('fs/getMetadata', { path: uri(file), sandbox });
    // The request's own helper and bwrap exit after its reply; with no pool nothing else is started.
    await until(() => survivors().length === 0, 'the cold helper to exit', 5_000);
    expect(await served.stop()).toBe(0);
    const line = served.stderr.split('\n').find((text) => text.startsWith('fs-sandbox serve stats: '));
    expect(JSON.parse((line as string).replace('fs-sandbox serve stats: ', '')).sources.pool).toBeNull();
  });
});
