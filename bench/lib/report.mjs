import { ratio, summarize } from './stats.mjs';

const ms = (value) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
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
export function latencySvg(summary) {
  const width = 760;
  const height = 420;
  const left = 60;
  const top = 40;
  const plotHeight = 300;
  const groups = ['readFile', 'getMetadata', 'writeFile'];
  const modes = [
    ['in-process', '#7fb069'],
    ['warm', '#4e79a7'],
    ['cold', '#e15759'],
  ];
  const maxValue = Math.max(
    summary.floor * 1.25,
    ...groups.flatMap((group) => modes.map(([mode]) => summary.latency[`${group} ${mode}`].p90)),
  );
  const y = (value) => Math.round((top + plotHeight - (value / maxValue) * plotHeight) * 10) / 10;
  const groupWidth = (width - left - 40) / groups.length;
  const barWidth = 46;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">fs-sandbox: 1 KiB operation latency (median bar, p90 whisker)</text>`,
  ];
  const step = maxValue > 100 ? 20 : 10;
  for (let tick = 0; tick <= maxValue; tick += step) {
    parts.push(
      `<line x1="${left}" x2="${width - 20}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 8}" y="${y(tick) + 4}" text-anchor="end">${tick}</text>`,
    );
  }
  parts.push(
    `<text x="16" y="${top + plotHeight / 2}" transform="rotate(-90 16 ${top + plotHeight / 2})" text-anchor="middle">ms</text>`,
  );
  groups.forEach((group, g) => {
    const x0 = left + g * groupWidth + (groupWidth - modes.length * (barWidth + 8)) / 2;
    modes.forEach(([mode, color], m) => {
      const stats = summary.latency[`${group} ${mode}`];
      const x = x0 + m * (barWidth + 8);
      parts.push(
        `<rect x="${x}" y="${y(stats.median)}" width="${barWidth}" height="${y(0) - y(stats.median)}" fill="${color}"/>`,
        `<line x1="${x + barWidth / 2}" x2="${x + barWidth / 2}" y1="${y(stats.median)}" y2="${y(stats.p90)}" stroke="#333"/>`,
        `<line x1="${x + barWidth / 2 - 6}" x2="${x + barWidth / 2 + 6}" y1="${y(stats.p90)}" y2="${y(stats.p90)}" stroke="#333"/>`,
        `<text x="${x + barWidth / 2}" y="${y(stats.p90) - 5}" text-anchor="middle">${ms(stats.median)}</text>`,
      );
    });
    parts.push(
      `<text x="${left + g * groupWidth + groupWidth / 2}" y="${top + plotHeight + 20}" text-anchor="middle" font-weight="bold">fs/${group}</text>`,
    );
  });
  parts.push(
    `<line x1="${left}" x2="${width - 20}" y1="${y(summary.floor)}" y2="${y(summary.floor)}" stroke="#555" stroke-dasharray="6 4"/>`,
    `<text x="${width - 22}" y="${y(summary.floor) - 6}" text-anchor="end">floor (bwrap + node, empty script) ${ms(summary.floor)} ms</text>`,
  );
  modes.forEach(([mode, color], m) => {
    const x = left + m * 150;
    parts.push(
      `<rect x="${x}" y="${height - 40}" width="14" height="14" fill="${color}"/>`,
      `<text x="${x + 20}" y="${height - 28}">${mode === 'warm' ? 'sandboxed, warm pool' : mode === 'cold' ? 'sandboxed, cold' : 'in-process'}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
