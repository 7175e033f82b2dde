// Benchmark (not a test): the V2 app-server surface, `fs-sandbox app-server` against the reference
// `codex app-server` in the same interleaved rounds (each round rotates which server goes first):
//   - command/exec of `true` (request to reply);
//   - command/exec of a command writing 1 MiB to stdout (request to the reply carrying it);
//   - fs/changed latency: a file created in a watched directory, from the write to the
//     notification naming it (both servers coalesce changes over a short window: it is part of it).
// Both run their commands sandboxed: every request carries `sandboxPolicy: readOnly` (ours also
// always runs under its own policy), and a write probe is refused by both before anything is timed.
// Writes bench/results/app-server.json.
//
//   node bench/app-server.mjs [rounds]   (default 20 rounds; needs the built packages)
//   FS_SANDBOX_BENCH_CODEX=/path/to/codex measures that binary instead of the pinned one (the
//   tests' devDependency, else installed into the bench's cache as bench/run.mjs --peer codex does)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { AppServerPeer } from './lib/app-server-peer.mjs';
import { binaryUnder, cacheRoot, codexVersion, locateCodex } from './lib/codex-peer.mjs';
import { ms, runMeta } from './lib/format.mjs';
import { ratio, rotated, summarize } from './lib/stats.mjs';

if (process.platform !== 'linux') {
  console.error('bench/app-server.mjs measures the bwrap backend: run it on Linux');
  process.exit(2);
}
const rounds = Math.max(5, Number(process.argv[2] ?? 20));
const MiB = 1024 * 1024;
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
const cliBin = fileURLToPath(new URL('../packages/cli/bin/fs-sandbox.js', import.meta.url));
// The tests' pinned reference when it is installed (the same version the cache would hold).
const codex =
  (process.env.FS_SANDBOX_BENCH_CODEX
    ? null
    : binaryUnder(fileURLToPath(new URL('../test/', import.meta.url)))) ??
  locateCodex(process.env, (line) => process.stderr.write(`bench: ${line}\n`));
// The reference refuses some set-ups with CODEX_HOME below a temporary directory: both live in the
// bench's cache folder (as bench/run.mjs --peer codex keeps its CODEX_HOME), removed at the end.
mkdirSync(cacheRoot(process.env), { recursive: true });
const base = mkdtempSync(join(cacheRoot(process.env), 'app-server-'));
const work = join(base, 'work');
const codexHome = join(base, 'codex-home');
mkdirSync(join(work, 'watched'), { recursive: true });
mkdirSync(codexHome);

const readOnly = { type: 'readOnly' };
const ONE_MIB_COMMAND = ['sh', '-c', `yes | head -c ${MiB}`];

const ROWS = {
  'command/exec true': async (peer) => {
    const result = await peer.call('command/exec', { command: ['true'], cwd: work, sandboxPolicy: readOnly });
    if (result.exitCode !== 0) throw new Error(`${peer.name}: true exited ${result.exitCode}`);
  },
  'command/exec 1 MiB output': async (peer) => {
    const result = await peer.call('command/exec', {
      command: ONE_MIB_COMMAND,
      cwd: work,
      sandboxPolicy: readOnly,
      outputBytesCap: 2 * MiB,
    });
    if (result.stdout.length !== MiB)
      throw new Error(`${peer.name}: ${result.stdout.length} bytes of output`);
  },
};

let created = 0;
/** From the write of a new file in the watched directory to the fs/changed naming it. */
async function changedLatency(peer) {
  const name = `f-${created++}.txt`;
  const seen = peer.notification(
    (m) => m.method === 'fs/changed' && m.params.changedPaths.some((path) => path.endsWith(`/${name}`)),
  );
  const start = performance.now();
  writeFileSync(join(work, 'watched', name), 'x');
  await seen;
  return performance.now() - start;
}

async function timed(run) {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** Both servers refuse a write under readOnly before anything of them is measured. */
async function assertSandboxes(peer) {
  const probe = join(work, 'probe');
  const result = await peer.call('command/exec', {
    command: ['sh', '-c', `touch ${probe} 2>/dev/null; echo $?`],
    cwd: work,
    sandboxPolicy: readOnly,
  });
  if (result.stdout.trim() === '0')
    throw new Error(`${peer.name} let a readOnly command write: not sandboxed`);
}

const peers = [
  new AppServerPeer('fs-sandbox', [process.execPath, cliBin, 'app-server', '--cwd', work], { cwd: work }),
  new AppServerPeer('codex', [codex, 'app-server', '--listen', 'stdio://'], {
    cwd: work,
    env: { PATH: '/usr/bin:/bin', CODEX_HOME: codexHome, HOME: codexHome },
  }),
];
const meta = runMeta({ rounds, codex: codexVersion(codex) });
try {
  process.stderr.write(`bench: app-server, fs-sandbox vs codex ${meta.codex} (${rounds} rounds)\n`);
  for (const peer of peers) {
    await peer.initialize();
    await assertSandboxes(peer);
    await peer.call('fs/watch', { watchId: 'bench', path: join(work, 'watched') });
  }
  const samples = {};
  const add = (row, peer, value) => {
    samples[row] ??= {};
    samples[row][peer.name] ??= [];
    samples[row][peer.name].push(value);
  };
  // One warm-up round per peer, not counted.
  for (const peer of peers) {
    for (const run of Object.values(ROWS)) await run(peer);
    await changedLatency(peer);
  }
  for (let round = 0; round < rounds; round++) {
    for (const peer of rotated(peers, round)) {
      for (const [row, run] of Object.entries(ROWS)) add(row, peer, await timed(() => run(peer)));
      add('fs/changed after a create', peer, await changedLatency(peer));
    }
  }
  meta.loadAfter = loadavg();
  const stats = {};
  const lines = [
    `app-server, ${rounds} rounds, ${meta.cpus} CPUs, load ${meta.loadBefore.map((l) => l.toFixed(2)).join(' ')} -> ${meta.loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
    `  ${'row'.padEnd(28)} ${'fs-sandbox'.padStart(22)} ${'codex'.padStart(22)}  ours/codex`,
  ];
  for (const [row, byPeer] of Object.entries(samples)) {
    const ours = summarize(byPeer['fs-sandbox']);
    const theirs = summarize(byPeer.codex);
    stats[row] = { 'fs-sandbox': ours, codex: theirs, ratio: ratio(ours.median, theirs.median) };
    const cell = (s) => `${ms(s.median)} (p90 ${ms(s.p90)})`.padStart(22);
    lines.push(`  ${row.padEnd(28)} ${cell(ours)} ${cell(theirs)}  ${stats[row].ratio.toFixed(2)}x`);
  }
  console.log(lines.join('\n'));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(`${resultsDir}app-server.json`, `${JSON.stringify({ meta, stats }, null, 2)}\n`);
} catch (error) {
  console.error(`bench: stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await Promise.all(peers.map((peer) => peer.stop()));
  rmSync(base, { recursive: true, force: true });
}
