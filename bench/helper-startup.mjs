// Benchmark (not a test): how much slower is one helper run than starting node at all?
// In one run, interleaved, it measures spawn -> full reply for `node dist/helper.cjs` answering a
// 1 KiB fs/readFile, and spawn -> exit for `node -e 0`, then prints medians, p90s and the ratio
// (target <= 1.3x). `node empty.cjs` is measured too: `-e` sets up an eval context a script does
// not, so it is the stricter floor. It also lists the node built-in modules the helper loads
// beyond `node -e 0`, the first place to look when start-up regresses.
//
//   node bench/helper-startup.mjs [runs]   (default 40; builds the helper if dist/ is missing)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const TARGET_RATIO = 1.3;
const runs = Math.max(30, Number(process.argv[2] ?? 40));
const helperDir = fileURLToPath(new URL('../packages/helper/', import.meta.url));
const bundle = join(helperDir, 'dist', 'helper.cjs');
if (!existsSync(bundle))
  execFileSync(process.execPath, [join(helperDir, 'scripts', 'build.mjs')], { stdio: 'inherit' });

const work = mkdtempSync(join(tmpdir(), 'fs-helper-bench-'));
const file = join(work, 'one-kib.bin');
writeFileSync(file, Buffer.alloc(1024, 7));
const empty = join(work, 'empty.cjs');
writeFileSync(empty, '');
const request = `${JSON.stringify({ operation: 'fs/readFile', params: { path: file } })}\n`;

/** Spawns `args`, writes `input`, resolves with ms from spawn until stdout ended and the process exited. */
function timeRun(args, input) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let bytes = 0;
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}`));
      else resolve({ ms: performance.now() - started, bytes });
    });
    child.stdin.end(input);
  });
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9), min: sorted[0] };
}

function loadedModules(args, input) {
  const out = join(work, `modules-${args.length}.json`);
  const preload = join(work, 'list-modules.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)));`,
  );
  execFileSync(process.execPath, ['-r', preload, ...args], { input, stdio: ['pipe', 'ignore', 'inherit'] });
  return JSON.parse(readFileSync(out, 'utf8'));
}

try {
  // Warm the page cache and the node binary once for both, so neither side pays a cold disk.
  await timeRun(['-e', '0'], '');
  await timeRun([bundle], request);
  const kinds = {
    helper: { args: [bundle], input: request, samples: [] },
    nodeE0: { args: ['-e', '0'], input: '', samples: [] },
    emptyScript: { args: [empty], input: '', samples: [] },
  };
  const order = Object.keys(kinds);
  for (let i = 0; i < runs; i++) {
    // Interleaved, rotating which goes first, so machine load drifts hit all alike.
    for (let k = 0; k < order.length; k++) {
      const kind = kinds[order[(i + k) % order.length]];
      const result = await timeRun(kind.args, kind.input);
      if (kind === kinds.helper && result.bytes < 1024)
        throw new Error('the helper reply is missing the file bytes');
      kind.samples.push(result.ms);
    }
  }
  const h = stats(kinds.helper.samples);
  const n = stats(kinds.nodeE0.samples);
  const e = stats(kinds.emptyScript.samples);
  const ratio = h.median / n.median;
  const fmt = (x) => `${x.toFixed(1)} ms`;
  console.log(
    `helper start-up: ${runs} runs each, interleaved (node ${process.version}, ${process.platform})`,
  );
  console.log(
    `  node -e 0                        median ${fmt(n.median)}  p90 ${fmt(n.p90)}  min ${fmt(n.min)}`,
  );
  console.log(
    `  node empty.cjs                   median ${fmt(e.median)}  p90 ${fmt(e.p90)}  min ${fmt(e.min)}`,
  );
  console.log(
    `  helper fs/readFile 1 KiB (reply) median ${fmt(h.median)}  p90 ${fmt(h.p90)}  min ${fmt(h.min)}`,
  );
  console.log(
    `  helper / node -e 0: median ${ratio.toFixed(2)}x, p90 ${(h.p90 / n.p90).toFixed(2)}x  (target <= ${TARGET_RATIO}x: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'})`,
  );
  console.log(
    `  helper / node empty.cjs: median ${(h.median / e.median).toFixed(2)}x, p90 ${(h.p90 / e.p90).toFixed(2)}x`,
  );
  const base = new Set(loadedModules(['-e', '0'], ''));
  const extra = loadedModules([bundle], request).filter((name) => !base.has(name));
  console.log(`  built-in modules loaded beyond node -e 0 (${extra.length}): ${extra.join(', ') || 'none'}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
