import { ms } from './format.mjs';
import { ratio, summarize } from './stats.mjs';

const times = (value) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : '-');

function table(headers, rows) {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => String(row[i]).length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) => String(cell).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Everything measured, summarised, with the four targets evaluated. */
export function summarizeRun(raw) {
  const latency = Object.fromEntries(
    Object.entries(raw.latency.samples).map(([name, samples]) => [name, summarize(samples)]),
  );
  const floor = latency.floor.median;
  const large = Object.fromEntries(
    Object.entries(raw.large.samples).map(([name, samples]) => [name, summarize(samples)]),
  );
  const start = Object.fromEntries(
    Object.entries(raw.start).map(([name, samples]) => [name, summarize(samples)]),
  );
  const target = (name, measured, limit, detail) => ({
    name,
    measured,
    limit,
    met: measured <= limit,
    detail,
  });
  const targets = [
    target(
      'warm 1 KiB readFile median <= 0.1 x cold median',
      ratio(latency['readFile warm'].median, latency['readFile cold'].median),
      0.1,
      `${ms(latency['readFile warm'].median)} ms vs ${ms(latency['readFile cold'].median)} ms`,
    ),
    target(
      'cold 1 KiB readFile median <= 1.15 x floor',
      ratio(latency['readFile cold'].median, floor),
      1.15,
      `${ms(latency['readFile cold'].median)} ms vs floor ${ms(floor)} ms`,
    ),
    target(
      'sandboxed 64 MiB readFile <= 2 x in-process (same server)',
      ratio(large.sandboxed.median, large['in-process'].median),
      2,
      `${ms(large.sandboxed.median)} ms vs ${ms(large['in-process'].median)} ms`,
    ),
    target(
      'helper start-to-reply <= 1.3 x node -e 0',
      ratio(start['helper 1 KiB readFile'].median, start['node -e 0'].median),
      1.3,
      `${ms(start['helper 1 KiB readFile'].median)} ms vs ${ms(start['node -e 0'].median)} ms`,
    ),
  ];
  return { latency, floor, large, start, targets };
}

export function formatReport(meta, raw, summary) {
  const out = [];
  out.push(
    `fs-sandbox bench: node ${meta.node}, ${meta.kernel}, ${meta.cpus} CPUs, load ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')} at start; ${meta.rounds} interleaved rounds`,
  );
  out.push('', '1 KiB operations (ms; ratios to the floor: bwrap + node on an empty script, same mounts)');
  const latencyRows = Object.entries(summary.latency).map(([name, stats]) => [
    name,
    ms(stats.median),
    ms(stats.p90),
    times(ratio(stats.median, summary.floor)),
    stats.n,
  ]);
  out.push(table(['variant', 'median', 'p90', 'x floor', 'n'], latencyRows));
  out.push(
    `warm pool during the matrix: hits ${raw.latency.pool.hits}, misses ${raw.latency.pool.misses}, stale retries ${raw.latency.pool.staleRetries}; samples taken on a busy machine: ${raw.latency.notQuiet}`,
  );
  if (raw.latency.failures.length > 0) {
    out.push(
      `failed samples (left out of the figures): ${raw.latency.failures.map((failure) => `${failure.variant} round ${failure.round + 1}: ${failure.message}`).join('; ')}`,
    );
  }
  const beforeWarm = summary.latency['readFile warm (baseline)'];
  const beforeCold = summary.latency['readFile cold (baseline)'];
  if (beforeWarm !== undefined && beforeCold !== undefined) {
    const now = summary.latency;
    out.push(
      `against the baseline build (${meta.baseline}), same rounds: warm readFile ${ms(now['readFile warm'].median)} ms vs ${ms(beforeWarm.median)} ms (${times(ratio(now['readFile warm'].median, beforeWarm.median))}), cold ${ms(now['readFile cold'].median)} ms vs ${ms(beforeCold.median)} ms (${times(ratio(now['readFile cold'].median, beforeCold.median))})`,
    );
  }
  out.push('', 'Throughput, sandboxed 1 KiB readFile through the library (one helper per call)');
  const throughputRows = [];
  for (const [concurrency, modes] of Object.entries(raw.throughput)) {
    for (const [mode, result] of Object.entries(modes)) {
      throughputRows.push([
        concurrency,
        mode,
        result.opsPerSecond.toFixed(1),
        ms(result.latency.median),
        ms(result.latency.p90),
        `${result.hits}/${result.misses}`,
      ]);
    }
  }
  out.push(table(['concurrency', 'mode', 'ops/s', 'median ms', 'p90 ms', 'hits/misses'], throughputRows));
  out.push('', `fs/readFile of 64 MiB through one fs-sandbox serve (ms)`);
  const largeRows = Object.entries(summary.large).map(([name, stats]) => [
    name,
    ms(stats.median),
    ms(stats.p90),
    times(ratio(stats.median, summary.large['in-process'].median)),
    stats.n,
  ]);
  out.push(table(['variant', 'median', 'p90', 'x in-process', 'n'], largeRows));
  out.push(
    `server peak RSS after the 64 MiB reads: ${(raw.large.peakResidentBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  out.push(
    `one sandboxed 512 MiB readFile through a fresh server: ${(raw.huge.ms / 1000).toFixed(2)} s, server peak RSS ${(raw.huge.peakResidentBytes / 2 ** 20).toFixed(0)} MiB (idle ${(raw.huge.idleResidentBytes / 2 ** 20).toFixed(0)} MiB)`,
  );
  out.push('', 'Helper start-to-reply without a sandbox (ms, filtered environment for all)');
  const startRows = Object.entries(summary.start).map(([name, stats]) => [
    name,
    ms(stats.median),
    ms(stats.p90),
    times(ratio(stats.median, summary.start['node -e 0'].median)),
    stats.n,
  ]);
  out.push(table(['variant', 'median', 'p90', 'x node -e 0', 'n'], startRows));
  out.push('', 'Targets');
  out.push(
    table(
      ['target', 'measured', 'met', 'detail'],
      summary.targets.map((t) => [t.name, times(t.measured), t.met ? 'yes' : 'NO', t.detail]),
    ),
  );
  return out.join('\n');
}

/** A hand-written SVG: medians as bars, p90 as whiskers, the floor as a dashed line. */
