import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { uri } from './fixture.mjs';
import { machineQuiet, spareReady } from './settle.mjs';
import { summarize } from './stats.mjs';

/**
 * Sandboxed 1 KiB fs/readFile with `concurrency` calls in flight until `total` are done, through
 * the library: warm (a pool with a spare per concurrent call) and cold (no pool). Every call still
 * uses its own helper process, so sustained throughput is bounded by how fast helpers start;
 * the pool moves the start off the calls' critical path.
 */
export async function measureThroughput(fixture, sandbox, concurrency, total) {
  const results = {};
  for (const mode of ['warm', 'cold']) {
    const broker = createBroker({
      pool: mode === 'warm' ? { size: concurrency, perKey: concurrency, idleMs: 600_000 } : false,
    });
    const params = { path: uri(fixture.oneKiB), sandbox };
    await broker.call('fs/readFile', params);
    if (mode === 'warm') await spareReady(fixture.ws, concurrency, 30_000);
    await machineQuiet({ capMs: 1000 });
    const latencies = [];
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < total) {
        next += 1;
        const began = performance.now();
        const result = await broker.call('fs/readFile', params);
        if (result.dataBase64.length !== 1024) throw new Error('short read');
        latencies.push(performance.now() - began);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    const pool = broker.poolStats();
    await broker.close();
    results[mode] = {
      opsPerSecond: total / seconds,
      latency: summarize(latencies),
      hits: pool === null ? 0 : pool.hits,
      misses: pool === null ? total : pool.misses - 1,
    };
  }
  return results;
}
