// Benchmark (not a test): the search part. fs/search over a generated 20 000-file tree, sandboxed
// cold and warm, as a ratio to ripgrep run directly in the same run (targets: ≤ 1.5× cold, ≤ 1.2×
// warm). Writes bench/results/search.json.
//
//   pnpm bench:search               (builds first)
//   node bench/search.mjs [rounds]  (default 15 rounds; needs the built packages)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { resolveHelperRuntime } from '@fs-sandbox/broker';
import { createFixture, sandboxFor } from './lib/fixture.mjs';
import { ms, runMeta } from './lib/format.mjs';
import { measureSearch } from './lib/search.mjs';

if (process.platform !== 'linux') {
  console.error('bench/search.mjs measures the bwrap backend: run it on Linux');
  process.exit(2);
}
const rounds = Math.max(5, Number(process.argv[2] ?? 15));
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
const meta = runMeta({ rounds });
const runtime = await resolveHelperRuntime('linux', process.env);
const fixture = createFixture();
try {
  process.stderr.write(`bench: fs/search over 20 000 files (${rounds} rounds)\n`);
  const result = await measureSearch(fixture, sandboxFor(fixture), runtime, rounds);
  meta.loadAfter = loadavg();
  const lines = [
    `search over ${result.files} files, ${rounds} rounds, ${meta.cpus} CPUs, load ${meta.loadBefore.map((l) => l.toFixed(2)).join(' ')} -> ${meta.loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
  ];
  for (const [name, stats] of Object.entries(result.stats)) {
    lines.push(`  ${name.padEnd(22)} median ${ms(stats.median)}  p90 ${ms(stats.p90)}`);
  }
  lines.push(`  fs/search cold / rg direct: ${result.ratios.cold.toFixed(2)}x (target <= 1.5x)`);
  lines.push(`  fs/search warm / rg direct: ${result.ratios.warm.toFixed(2)}x (target <= 1.2x)`);
  console.log(lines.join('\n'));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(`${resultsDir}search.json`, `${JSON.stringify({ meta, ...result }, null, 2)}\n`);
} catch (error) {
  console.error(`bench: stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  rmSync(fixture.base, { recursive: true, force: true });
}
