import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { uri } from './fixture.mjs';
import { machineQuiet, spareReady } from './settle.mjs';
import { rotated, summarize } from './stats.mjs';

/** Reads in one awaited run, as a library user writes them: `for (...) await broker.call(...)`. */
export const AWAITED_READS = 50;
const SPACING_MS = 150;
/** Spaced reads per round, so the spaced row has as many samples as a few runs. */
const SPACED_PER_ROUND = 5;
/** The spaced brokers' pool: two spares of the one shape, kept for the whole run. */
const SPACED_POOL = { size: 2, perKey: 2, idleMs: 600_000 };

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The library pattern the warm pool must serve: a fresh broker (default pool) and 50 sandboxed
 * 1 KiB reads, each awaited before the next is sent — with no yield between them, and with a
 * setImmediate between them (the event loop turns once, so a refill scheduled after a reply runs
 * before the next call). Beside them, in the same rounds, the spaced warm read (a ready spare and a
 * pause before each call). Per runtime: the medians and the share of each run's reads a spare
 * served (pool hits over hits and misses). With `baseline` (another checkout's broker library), its
 * spaced reads and its runs with no yield are in the same rounds too.
 */
export async function measureAwaitedReads(fixture, sandbox, runtimes, rounds, baseline = null) {
  const params = { path: uri(fixture.oneKiB), sandbox };
  const timed = async (broker) => {
    const started = performance.now();
    const result = await broker.call('fs/readFile', params);
    if (result.dataBase64.length !== 1024) throw new Error('short read');
    return performance.now() - started;
  };
  const awaitedRun = async (runtime, yieldBetween, create = createBroker) => {
    const broker = create({ helperRuntime: runtime });
    const samples = [];
    try {
      for (let i = 0; i < AWAITED_READS; i++) {
        samples.push(await timed(broker));
        if (yieldBetween) await nextTurn();
      }
      const { hits, misses } = broker.poolStats();
      return { samples, hits, misses };
    } finally {
      await broker.close();
    }
  };
  const per = Object.fromEntries(
    runtimes.map((runtime) => [
      runtime,
      {
        spacedBroker: createBroker({ pool: SPACED_POOL, helperRuntime: runtime }),
        spaced: [],
        baselineSpacedBroker:
          baseline === null ? null : baseline.createBroker({ pool: SPACED_POOL, helperRuntime: runtime }),
        baselineSpaced: [],
        noYield: { samples: [], hits: 0, misses: 0 },
        yield: { samples: [], hits: 0, misses: 0 },
        baselineNoYield: { samples: [], hits: 0, misses: 0 },
      },
    ]),
  );
  const add = (into, run) => {
    into.samples.push(...run.samples);
    into.hits += run.hits;
    into.misses += run.misses;
  };
  for (const runtime of runtimes) {
    await timed(per[runtime].spacedBroker);
    if (baseline !== null) await timed(per[runtime].baselineSpacedBroker);
  }
  // Between runs only the spaced brokers keep spares (two each): every run's broker is closed.
  const spares = SPACED_POOL.perKey * runtimes.length * (baseline === null ? 1 : 2);
  for (let round = 0; round < rounds; round++) {
    for (const runtime of rotated(runtimes, round)) {
      const figures = per[runtime];
      const modes = [
        'spaced',
        'noYield',
        'yield',
        ...(baseline === null ? [] : ['baselineSpaced', 'baselineNoYield']),
      ];
      for (const mode of rotated(modes, round)) {
        if (mode === 'spaced' || mode === 'baselineSpaced') {
          const broker = mode === 'spaced' ? figures.spacedBroker : figures.baselineSpacedBroker;
          for (let i = 0; i < SPACED_PER_ROUND; i++) {
            await spareReady(fixture.ws, spares);
            await pause(SPACING_MS);
            figures[mode].push(await timed(broker));
          }
          continue;
        }
        await spareReady(fixture.ws, spares);
        await machineQuiet();
        const create = mode === 'baselineNoYield' ? baseline.createBroker : createBroker;
        add(figures[mode], await awaitedRun(runtime, mode === 'yield', create));
      }
    }
  }
  await Promise.all(
    runtimes
      .flatMap((runtime) => [per[runtime].spacedBroker, per[runtime].baselineSpacedBroker ?? []].flat())
      .map((broker) => broker.close()),
  );
  return Object.fromEntries(
    runtimes.map((runtime) => {
      const { spaced, noYield, yield: yielded, baselineSpaced, baselineNoYield } = per[runtime];
      return [
        runtime,
        {
          spaced: summarize(spaced),
          noYield: { ...summarize(noYield.samples), hitRate: hitRate(noYield) },
          yield: { ...summarize(yielded.samples), hitRate: hitRate(yielded) },
          ...(baseline === null
            ? {}
            : {
                baselineSpaced: summarize(baselineSpaced),
                baselineNoYield: { ...summarize(baselineNoYield.samples), hitRate: hitRate(baselineNoYield) },
              }),
        },
      ];
    }),
  );
}

function hitRate({ hits, misses }) {
  return hits + misses === 0 ? Number.NaN : hits / (hits + misses);
}

/** The rows as text, with each awaited median against the spaced one of the same rounds. */
export function formatAwaitedReads(result) {
  const lines = [`Awaited reads (library, ${AWAITED_READS} per run, a fresh broker each run)`];
  for (const [
    runtime,
    { spaced, noYield, yield: yielded, baselineSpaced, baselineNoYield },
  ] of Object.entries(result)) {
    const ratio = (figures) => (figures.median / spaced.median).toFixed(2);
    const pct = (rate) => `${(rate * 100).toFixed(0)}%`;
    lines.push(
      `  ${runtime}: spaced warm read ${spaced.median.toFixed(2)} ms (n ${spaced.n}); ` +
        `no yield ${noYield.median.toFixed(2)} ms, ${ratio(noYield)}× spaced, pool hits ${pct(noYield.hitRate)}; ` +
        `a setImmediate between ${yielded.median.toFixed(2)} ms, ${ratio(yielded)}× spaced, pool hits ${pct(yielded.hitRate)}; ` +
        `no yield / setImmediate ${(noYield.median / yielded.median).toFixed(2)}×` +
        (baselineNoYield === undefined
          ? ''
          : `; baseline spaced ${baselineSpaced.median.toFixed(2)} ms, no yield ${baselineNoYield.median.toFixed(2)} ms, ${(baselineNoYield.median / baselineSpaced.median).toFixed(2)}× its spaced, pool hits ${pct(baselineNoYield.hitRate)}`),
    );
  }
  return lines.join('\n');
}
