import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { uri } from './fixture.mjs';
import { machineQuiet, spareReady } from './settle.mjs';
import { ratio, seededShuffle, summarize } from './stats.mjs';

const FILES = 100;

/**
 * "Read these 100 files": 100 sandboxed 1 KiB reads as one fs/batch (one helper), as 100
 * sequential warm fs/readFile calls, and as 100 concurrent ones, through one broker with a warm
 * pool, the three interleaved in shuffled order each round. Each sample is the wall time of all 100.
 */
export async function measureBatchReads(fixture, sandbox, rounds) {
  const dir = join(fixture.data, 'batch');
  mkdirSync(dir, { recursive: true });
  const paths = Array.from({ length: FILES }, (_, i) => {
    const path = join(dir, `f${i}.bin`);
    writeFileSync(path, Buffer.alloc(1024, i));
    return uri(path);
  });
  const broker = createBroker({ pool: { size: 4, perKey: 4, idleMs: 600_000 } });
  const read = (path) => broker.call('fs/readFile', { path, sandbox });
  const modes = {
    batch: async () => {
      const { results } = await broker.call('fs/batch', {
        operations: paths.map((path) => ({ method: 'fs/readFile', params: { path } })),
        sandbox,
      });
      if (results.some((outcome) => outcome.result?.dataBase64.length !== 1368))
        throw new Error('batch read failed');
    },
    sequential: async () => {
      for (const path of paths)
        if ((await read(path)).dataBase64.length !== 1024) throw new Error('short read');
    },
    concurrent: async () => {
      const all = await Promise.all(paths.map(read));
      if (all.some((result) => result.dataBase64.length !== 1024)) throw new Error('short read');
    },
  };
  const samples = { batch: [], sequential: [], concurrent: [] };
  try {
    for (const run of Object.values(modes)) await run();
    for (let round = 0; round < rounds; round++) {
      for (const mode of seededShuffle(Object.keys(modes), round + 1)) {
        await spareReady(fixture.data, 1, 10_000).catch(() => undefined);
        await machineQuiet({ capMs: 500 });
        const began = performance.now();
        await modes[mode]();
        samples[mode].push(performance.now() - began);
      }
    }
  } finally {
    await broker.close();
  }
  const summary = Object.fromEntries(Object.entries(samples).map(([mode, list]) => [mode, summarize(list)]));
  return {
    files: FILES,
    summary,
    ratios: {
      sequentialOverBatch: ratio(summary.sequential.median, summary.batch.median),
      concurrentOverBatch: ratio(summary.concurrent.median, summary.batch.median),
    },
    samples,
  };
}

export function formatBatchReads(result) {
  const { summary, ratios, files } = result;
  const line = (name, s) =>
    `  ${name.padEnd(28)} median ${s.median.toFixed(1).padStart(8)} ms   p90 ${s.p90.toFixed(1).padStart(8)} ms`;
  return [
    `${files} × 1 KiB sandboxed reads (wall time of all ${files}, n=${summary.batch.n} each)`,
    line('one fs/batch', summary.batch),
    line('sequential warm fs/readFile', summary.sequential),
    line('concurrent fs/readFile', summary.concurrent),
    `  sequential / batch: ${ratios.sequentialOverBatch.toFixed(1)}×   concurrent / batch: ${ratios.concurrentOverBatch.toFixed(1)}×`,
  ].join('\n');
}
