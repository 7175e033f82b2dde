import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { uri, writePatternFile } from './fixture.mjs';
import { ServeClient } from './server-client.mjs';
import { helperProcesses, machineQuiet, spareReady } from './settle.mjs';
import { summarize } from './stats.mjs';

const BURST = 32;
const BACK_TO_BACK = 16;
const SPACING_MS = 150;

/**
 * node and Bun helpers side by side, interleaved per round (one runtime, then the other, the order
 * swapped every round): a sandboxed 1 KiB fs/readFile cold (pool off), warm with a pause before
 * each call, and back to back (no pause) through the library; a burst of 32 concurrent reads
 * through `fs-sandbox serve`, with its pool on and off; a 64 MiB read through serve; and the peak
 * resident memory of each warm spare.
 */
export async function measureRuntimes(fixture, sandbox, cliBin, runtimes, rounds) {
  const read = { path: uri(fixture.oneKiB), sandbox };
  const large = join(fixture.data, 'runtimes-64mib.bin');
  writePatternFile(large, 64 * 1024 * 1024);
  const per = {};
  for (const runtime of runtimes) {
    per[runtime] = {
      cold: createBroker({ pool: false, helperRuntime: runtime }),
      warm: createBroker({ pool: { size: 2, perKey: 2, idleMs: 600_000 }, helperRuntime: runtime }),
      samples: {
        cold: [],
        warm: [],
        backToBack: [],
        burstPool: [],
        burstNoPool: [],
        large: [],
        spareRss: [],
      },
    };
  }
  const timed = async (broker) => {
    const started = performance.now();
    const result = await broker.call('fs/readFile', read);
    if (result.dataBase64.length !== 1024) throw new Error('short read');
    return performance.now() - started;
  };
  for (const runtime of runtimes) {
    await timed(per[runtime].cold);
    await timed(per[runtime].warm);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? runtimes : [...runtimes].reverse();
    for (const runtime of order) {
      const { cold, warm, samples } = per[runtime];
      await machineQuiet();
      samples.cold.push(await timed(cold));
      // Every runtime's warm broker keeps two spares of this shape.
      await spareReady(fixture.ws, 2 * runtimes.length);
      await new Promise((resolve) => setTimeout(resolve, SPACING_MS));
      samples.spareRss.push(...sparesOf(fixture.ws, runtime).map(peakRss));
      samples.warm.push(await timed(warm));
    }
  }
  for (const runtime of runtimes) await Promise.all([per[runtime].cold.close(), per[runtime].warm.close()]);
  // Back to back: a run of reads with no pause, per runtime in turn (default pool); the pool must keep up.
  for (const runtime of runtimes) {
    per[runtime].backToBack = createBroker({ helperRuntime: runtime });
    await timed(per[runtime].backToBack);
  }
  for (let round = 0; round < Math.max(2, Math.floor(rounds / 5)); round++) {
    for (const runtime of round % 2 === 0 ? runtimes : [...runtimes].reverse()) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await machineQuiet();
      for (let i = 0; i < BACK_TO_BACK; i++)
        per[runtime].samples.backToBack.push(await timed(per[runtime].backToBack));
    }
  }
  for (const runtime of runtimes) {
    await Promise.all([
      per[runtime].cold.close(),
      per[runtime].warm.close(),
      per[runtime].backToBack.close(),
    ]);
  }
  // Through serve: bursts with the pool on and off, and 64 MiB reads.
  for (const runtime of runtimes) {
    for (const [variant, extra] of [
      ['burstPool', []],
      ['burstNoPool', ['--pool-size', '0']],
    ]) {
      const server = new ServeClient(cliBin, ['--helper-runtime', runtime, ...extra]);
      await server.handshake();
      await burst(server, read, 4);
      for (let round = 0; round < 3; round++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await machineQuiet();
        per[runtime].samples[variant].push(await burst(server, read, BURST));
      }
      if (variant === 'burstPool') {
        for (let round = 0; round < 3; round++) {
          await machineQuiet();
          const { ms, reply } = await server.time({
            id: `l${round}`,
            method: 'fs/readFile',
            params: { path: uri(large), sandbox },
          });
          if (reply.bytes < 64 * 1024 * 1024) throw new Error(`short 64 MiB read: ${reply.head}`);
          per[runtime].samples.large.push(ms);
        }
      }
      await server.stop();
    }
  }
  return Object.fromEntries(
    runtimes.map((runtime) => {
      const { samples } = per[runtime];
      return [
        runtime,
        {
          cold: summarize(samples.cold),
          warm: summarize(samples.warm),
          backToBack: summarize(samples.backToBack),
          burstOpsPerSecond: Math.max(...samples.burstPool),
          burstNoPoolOpsPerSecond: Math.max(...samples.burstNoPool),
          largeRead64MiB: summarize(samples.large),
          spareRssMiB: summarize(
            samples.spareRss.filter((bytes) => bytes > 0).map((bytes) => bytes / 2 ** 20),
          ),
        },
      ];
    }),
  );
}

/** `count` concurrent reads sent at once; the rate at which their replies came back. */
async function burst(server, params, count) {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    server.child.stdin.write(`${JSON.stringify({ id: `b${i}`, method: 'fs/readFile', params })}\n`);
  }
  for (let i = 0; i < count; i++) {
    const reply = await server.next();
    if (!reply.head.includes('"dataBase64"')) throw new Error(`burst read failed: ${reply.head}`);
  }
  return count / ((performance.now() - started) / 1000);
}

/** The pids of the waiting helpers of one runtime (its program names it: helper.cjs or helper-bun). */
function sparesOf(needle, runtime) {
  const bundle = runtime === 'bun' ? 'helper-bun' : 'helper.cjs';
  return helperProcesses(needle)
    .map((helper) => helper.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
          .split('\0')
          .some((arg) => arg.endsWith(`/${bundle}`));
      } catch {
        return false;
      }
    });
}

function peakRss(pid) {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The comparison table: each figure for node and Bun, and Bun/node. */
export function formatRuntimes(result) {
  const runtimes = Object.keys(result);
  const rows = [
    ['cold 1 KiB read, median ms', (r) => r.cold.median],
    ['warm 1 KiB read (spaced), median ms', (r) => r.warm.median],
    ['back-to-back 1 KiB read, median ms', (r) => r.backToBack.median],
    [`burst of ${BURST} via serve, ops/s (pool on)`, (r) => r.burstOpsPerSecond],
    [`burst of ${BURST} via serve, ops/s (pool off)`, (r) => r.burstNoPoolOpsPerSecond],
    ['64 MiB read via serve, median ms', (r) => r.largeRead64MiB.median],
    ['peak RSS per warm helper, median MiB', (r) => r.spareRssMiB.median],
  ];
  const header = ['', ...runtimes, ...(runtimes.length === 2 ? [`${runtimes[1]}/${runtimes[0]}`] : [])];
  const lines = rows.map(([name, pick]) => {
    const values = runtimes.map((runtime) => pick(result[runtime]));
    const ratio = values.length === 2 ? [(values[1] / values[0]).toFixed(2)] : [];
    return [name, ...values.map((value) => value.toFixed(1)), ...ratio];
  });
  const widths = header.map((_, i) => Math.max(...[header, ...lines].map((line) => String(line[i]).length)));
  return [header, ...lines]
    .map((line) =>
      line
        .map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i])))
        .join('  '),
    )
    .join('\n');
}
