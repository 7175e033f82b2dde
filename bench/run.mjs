// Benchmark (not a test). In one run, interleaved to cancel machine noise:
//   - 1 KiB fs/readFile, fs/getMetadata, fs/writeFile: in-process, sandboxed cold (no pool),
//     sandboxed warm (pool), and the floor (bwrap + node on an empty script with the helper's mounts);
//   - sandboxed throughput at concurrency 1, 4 and 16 (warm and cold) through the library;
//   - fs/readFile of 64 MiB in-process and sandboxed through the same `fs-sandbox serve`, and one
//     sandboxed 512 MiB read with the server's peak memory;
//   - helper start-to-reply against `node -e 0`;
//   - 100 × 1 KiB reads as one fs/batch vs 100 sequential warm fs/readFile vs 100 concurrent.
//   - awaited reads (lib/awaited-reads.mjs): a fresh broker's 50 sandboxed reads, each awaited
//     before the next, with no yield and with a setImmediate between, beside the spaced warm read,
//     with the pool's hit rate;
//   - the CLI's start (lib/cli-start.mjs): `fs-sandbox --version`, `cat` sandboxed and in-process,
//     each a whole process, against `node -e 0` in the same rounds;
//   - node and Bun helpers side by side (lib/runtimes.mjs): cold, warm spaced and back-to-back 1 KiB
//     reads through the library and through serve, a burst of 32 through serve with the pool on and
//     off, 64 MiB through serve, peak RSS per warm helper; with --peer codex, the reference Codex
//     exec-server's figures for the same rows through its own server, in the same rounds.
// Prints a table with medians, p90s, ratios and the four targets; writes bench/results/latest.json
// and bench/results/latency.svg.
//
//   pnpm bench                      (builds first)
//   node bench/run.mjs [rounds]     (default 40 rounds; needs the built packages)
//   node bench/run.mjs [rounds] --baseline DIR
//                                   also measures the sandboxed 1 KiB readFile of another built
//                                   checkout (e.g. a worktree of the commit before a change), in
//                                   the same interleaved rounds, as `readFile cold/warm (baseline)`,
//                                   and its CLI's `--version`, `cat` and `cat --no-sandbox` in the CLI's
//                                   start rounds (also with --cli-only), and its spaced warm read
//                                   and awaited reads with no yield in the awaited rounds (also
//                                   with --awaited-only)
//   node bench/run.mjs [rounds] --runtimes-only
//                                   only the node-vs-Bun comparison
//   node bench/run.mjs [rounds] --cli-only
//                                   only the CLI's start
//   node bench/run.mjs [rounds] --proxy-only
//                                   only the network proxy's cost (lib/proxy-download.mjs): a 10 MiB
//                                   download by curl in a command, direct and through the proxy
//   node bench/run.mjs [rounds] --hardening-only
//                                   only the host-privilege hardening's cost (lib/hardening-cost.mjs):
//                                   a helper's cold read and a command's start, with and without the
//                                   seccomp filter and the /proc and /sys masks, in the same rounds
//   node bench/run.mjs [rounds] --backends-only
//                                   only the two Linux backends (lib/backend-cost.mjs): a helper's
//                                   cold read and a command's start under bwrap and under Landlock,
//                                   in the same rounds
//   node bench/run.mjs [rounds] --awaited-only
//                                   only the awaited reads (rounds / 4 runs of 50 per runtime and mode)
//   node bench/run.mjs [rounds] --peer codex        (also with --runtimes-only; pnpm bench --peer codex)
//                                   adds the reference Codex exec-server (`codex exec-server --listen
//                                   stdio`, the @openai/codex version of test/package.json, installed
//                                   on first use into ${XDG_CACHE_HOME:-~/.cache}/fs-sandbox-bench/,
//                                   never into the project) to the runtime table's rounds: a `codex`
//                                   column, node/codex and bun/codex ratios, and the targets.
//                                   FS_SANDBOX_BENCH_CODEX=/path/to/codex measures that binary instead
//                                   (and turns the peer on without --peer).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { resolveHelperRuntime } from '@fs-sandbox/broker';
import { formatAwaitedReads, measureAwaitedReads } from './lib/awaited-reads.mjs';
import { formatBackendCost, measureBackendCost } from './lib/backend-cost.mjs';
import { formatBatchReads, measureBatchReads } from './lib/batch-read.mjs';
import { formatCliStart, measureCliStart } from './lib/cli-start.mjs';
import { assertSandboxes, codexVersion, locateCodex, startCodex } from './lib/codex-peer.mjs';
import { createFixture, sandboxFor } from './lib/fixture.mjs';
import { runMeta } from './lib/format.mjs';
import { formatHardeningCost, measureHardeningCost } from './lib/hardening-cost.mjs';
import { measureHelperStart } from './lib/helper-start.mjs';
import { measureLargeReads, measureOneHugeRead } from './lib/large-read.mjs';
import { measureLatencies } from './lib/latency.mjs';
import { latencySvg } from './lib/latency-chart.mjs';
import { formatProxyDownload, measureProxyDownload } from './lib/proxy-download.mjs';
import { formatReport, summarizeRun } from './lib/report.mjs';
import { measureRuntimes } from './lib/runtimes.mjs';
import { formatRuntimes } from './lib/runtimes-table.mjs';
import { measureThroughput } from './lib/throughput.mjs';

const { values: flags, positionals } = (() => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: {
        baseline: { type: 'string' },
        'runtimes-only': { type: 'boolean' },
        'awaited-only': { type: 'boolean' },
        'cli-only': { type: 'boolean' },
        'hardening-only': { type: 'boolean' },
        'backends-only': { type: 'boolean' },
        'proxy-only': { type: 'boolean' },
        peer: { type: 'string' },
      },
      allowPositionals: true,
    });
  } catch (error) {
    console.error(`bench/run.mjs: ${error.message}`);
    process.exit(2);
  }
})();
const baselineDir = flags.baseline ?? null;
const runtimesOnly = flags['runtimes-only'] === true;
const awaitedOnly = flags['awaited-only'] === true;
const cliOnly = flags['cli-only'] === true;
const hardeningOnly = flags['hardening-only'] === true;
const backendsOnly = flags['backends-only'] === true;
const proxyOnly = flags['proxy-only'] === true;
if (flags.peer !== undefined && flags.peer !== 'codex') {
  console.error(`bench/run.mjs: --peer knows only codex, not ${flags.peer}`);
  process.exit(2);
}
const withCodex = flags.peer === 'codex' || Boolean(process.env.FS_SANDBOX_BENCH_CODEX);
const rounds = Math.max(10, Number(positionals[0] ?? 40));
const MiB = 1024 * 1024;
const cliBin = fileURLToPath(new URL('../packages/cli/bin/fs-sandbox.js', import.meta.url));
const baselineCliBin = baselineDir === null ? null : resolve(baselineDir, 'packages/cli/bin/fs-sandbox.js');
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));

if (process.platform !== 'linux') {
  console.error('bench/run.mjs measures the bwrap backend: run it on Linux');
  process.exit(2);
}

const meta = runMeta({ rounds, baseline: baselineDir });

/** The --baseline checkout's broker library, or null. */
async function baselineBroker() {
  if (baselineDir === null) return null;
  return import(pathToFileURL(resolve(baselineDir, 'packages/broker/dist/index.js')).href);
}
// The helper start-up figures and the latency matrix are node's (helper.cjs with its code cache, and
// its floor: node on an empty script); Bun's are in the runtime table.
const runtime = await resolveHelperRuntime('linux', process.env, undefined, 'node');
const fixture = createFixture();
const sandbox = sandboxFor(fixture);
// On exit, not in a `finally`: the runtimes-only run ends with process.exit.
process.on('exit', () => rmSync(fixture.base, { recursive: true, force: true }));
const step = (text) => process.stderr.write(`bench: ${text}\n`);
// Bun is compared where its package is installed and passes the broker's self-check.
const helperRuntimes = ['node'];
if (
  (await resolveHelperRuntime('linux', { ...process.env, FS_SANDBOX_HELPER_RUNTIME: 'auto' })).executable
    .kind === 'bun'
)
  helperRuntimes.push('bun');

/** The runtime table's figures; with the peer on, the reference exec-server's in the same rounds. */
async function measureRuntimesWithPeer() {
  if (!withCodex) return measureRuntimes(fixture, sandbox, cliBin, helperRuntimes, rounds);
  const binary = locateCodex(process.env, step);
  meta.peer = { name: 'codex', binary, version: codexVersion(binary) };
  step(`peer: ${meta.peer.version} (${binary})`);
  const codex = await startCodex(binary);
  try {
    // The empty script lies outside the sandbox's roots.
    await assertSandboxes(codex, sandbox, fixture.oneKiB, fixture.emptyScript);
    return await measureRuntimes(fixture, sandbox, cliBin, helperRuntimes, rounds, codex);
  } finally {
    await codex.stop();
  }
}

/** Runs of 50 awaited reads per runtime and mode: each run is 50 samples already. */
const awaitedRounds = Math.max(3, Math.round(rounds / 4));

try {
  if (proxyOnly) {
    step(`10 MiB download, direct and through the proxy (${rounds} rounds)`);
    const proxy = await measureProxyDownload(fixture, sandbox, rounds);
    console.log(formatProxyDownload(proxy));
    meta.loadAfter = loadavg();
    console.log(
      `load before ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${meta.loadAfter.map((x) => x.toFixed(2)).join(' ')}`,
    );
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(`${resultsDir}proxy.json`, `${JSON.stringify({ meta, proxy }, null, 2)}\n`);
    process.exit(0);
  }
  if (hardeningOnly) {
    step(`host-privilege hardening (${rounds} rounds)`);
    const hardening = await measureHardeningCost(fixture, sandbox, runtime, rounds);
    console.log(formatHardeningCost(hardening));
    meta.loadAfter = loadavg();
    console.log(
      `load before ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${meta.loadAfter.map((x) => x.toFixed(2)).join(' ')}`,
    );
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(`${resultsDir}hardening.json`, `${JSON.stringify({ meta, hardening }, null, 2)}\n`);
    process.exit(0);
  }
  if (backendsOnly) {
    step(`bwrap and Landlock (${rounds} rounds)`);
    const backends = await measureBackendCost(fixture, sandbox, helperRuntimes, rounds);
    console.log(formatBackendCost(backends));
    meta.loadAfter = loadavg();
    console.log(
      `load before ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${meta.loadAfter.map((x) => x.toFixed(2)).join(' ')}`,
    );
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(
      `${resultsDir}backends.json`,
      `${JSON.stringify({ meta, backends }, null, 2)}
`,
    );
    process.exit(0);
  }
  if (cliOnly) {
    step(`CLI start (${rounds} rounds)`);
    const cliStart = await measureCliStart(fixture, cliBin, rounds, baselineCliBin);
    console.log(formatCliStart(cliStart));
    meta.loadAfter = loadavg();
    console.log(
      `load before ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${meta.loadAfter.map((x) => x.toFixed(2)).join(' ')}`,
    );
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(`${resultsDir}cli-start.json`, `${JSON.stringify({ meta, cliStart }, null, 2)}\n`);
    process.exit(0);
  }
  if (awaitedOnly) {
    step(`awaited reads (${awaitedRounds} rounds)`);
    const awaited = await measureAwaitedReads(
      fixture,
      sandbox,
      helperRuntimes,
      awaitedRounds,
      await baselineBroker(),
    );
    console.log(formatAwaitedReads(awaited));
    meta.loadAfter = loadavg();
    console.log(
      `load before ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${meta.loadAfter.map((x) => x.toFixed(2)).join(' ')}`,
    );
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(`${resultsDir}awaited.json`, `${JSON.stringify({ meta, awaited }, null, 2)}\n`);
    process.exit(0);
  }
  if (runtimesOnly) {
    step(`helper runtimes${withCodex ? ' and the Codex exec-server' : ''} (${rounds} rounds)`);
    const runtimes = await measureRuntimesWithPeer();
    console.log(formatRuntimes(runtimes));
    meta.loadAfter = loadavg();
    console.log(
      `load before ${meta.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${meta.loadAfter.map((x) => x.toFixed(2)).join(' ')}`,
    );
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(`${resultsDir}runtimes.json`, `${JSON.stringify({ meta, runtimes }, null, 2)}\n`);
    process.exit(0);
  }
  step(`1 KiB latency matrix (${rounds} rounds)`);
  const baseline = await baselineBroker();
  const latency = await measureLatencies(fixture, sandbox, runtime, rounds, baseline);
  const throughput = {};
  for (const concurrency of [1, 4, 16]) {
    step(`throughput at concurrency ${concurrency}`);
    throughput[concurrency] = await measureThroughput(fixture, sandbox, concurrency, 48 + 4 * concurrency);
  }
  step('64 MiB reads through fs-sandbox serve');
  const large = await measureLargeReads(fixture, sandbox, cliBin, 64 * MiB, 10);
  step('one 512 MiB sandboxed read');
  const huge = await measureOneHugeRead(fixture, sandbox, cliBin, 512 * MiB);
  step(`helper start-up (${rounds} rounds)`);
  const start = await measureHelperStart(fixture, runtime, rounds);
  step('100 × 1 KiB reads: one fs/batch, sequential, concurrent');
  const batchReads = await measureBatchReads(fixture, sandbox, Math.max(5, Math.round(rounds / 4)));

  step(`awaited reads (${awaitedRounds} rounds)`);
  const awaited = await measureAwaitedReads(fixture, sandbox, helperRuntimes, awaitedRounds, baseline);
  step(`CLI start (${rounds} rounds)`);
  const cliStart = await measureCliStart(fixture, cliBin, rounds, baselineCliBin);
  step(`host-privilege hardening (${rounds} rounds)`);
  const hardening = await measureHardeningCost(fixture, sandbox, runtime, rounds);
  step(`bwrap and Landlock (${rounds} rounds)`);
  const backends = await measureBackendCost(fixture, sandbox, helperRuntimes, rounds);
  step(`10 MiB download, direct and through the proxy (${rounds} rounds)`);
  const proxy = await measureProxyDownload(fixture, sandbox, rounds);

  step(`helper runtimes${withCodex ? ' and the Codex exec-server' : ''} (${rounds} rounds)`);
  const runtimes = await measureRuntimesWithPeer();

  const raw = { latency, throughput, large, huge, start };
  const summary = summarizeRun(raw);
  meta.loadAfter = loadavg();
  console.log(formatReport(meta, raw, summary));
  console.log(formatBatchReads(batchReads));
  console.log(`\n${formatAwaitedReads(awaited)}`);
  console.log(`\n${formatCliStart(cliStart)}`);
  console.log(`\n${formatHardeningCost(hardening)}`);
  console.log(`\n${formatBackendCost(backends)}`);
  console.log(`\n${formatProxyDownload(proxy)}`);
  console.log(`\nHelper runtimes (sandboxed, same run)\n${formatRuntimes(runtimes)}`);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    `${resultsDir}latest.json`,
    `${JSON.stringify(
      {
        meta,
        targets: summary.targets,
        latency: summary.latency,
        floor: { median: summary.floor, argv: latency.floorArgs },
        pool: latency.pool,
        throughput,
        largeRead64MiB: { ...summary.large, serverPeakResidentBytes: large.peakResidentBytes },
        largeRead512MiB: huge,
        helperStart: summary.start,
        batchReads: { summary: batchReads.summary, ratios: batchReads.ratios },
        awaitedReads: awaited,
        cliStart,
        hardening,
        backends,
        proxyDownload: proxy,
        helperRuntimes: runtimes,
        samples: { latency: latency.samples, largeRead64MiB: large.samples, helperStart: start },
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(`${resultsDir}latency.svg`, latencySvg(summary));
  step(`wrote ${resultsDir}latest.json and latency.svg`);
} catch (error) {
  // A part that cannot be measured at all ends the run with its reason, not a stack trace.
  console.error(`bench: stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
