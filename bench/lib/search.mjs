import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { RIPGREP_FIXED_ARGS, RIPGREP_THREADS } from '@fs-sandbox/helper';
import { uri } from './fixture.mjs';
import { spareReady } from './settle.mjs';
import { ratio, seededShuffle, summarize } from './stats.mjs';

const NEEDLE = 'needle_4242';

/** 20 000 files of ~2 KiB in 200 directories below `root`; one file in 100 holds the needle. */
export function createSearchTree(root) {
  const body = Array.from({ length: 40 }, (_, i) => `line ${i} of ordinary source text, nothing to see`).join(
    '\n',
  );
  for (let dir = 0; dir < 200; dir++) {
    const path = join(root, `d${dir}`);
    mkdirSync(path, { recursive: true });
    for (let file = 0; file < 100; file++) {
      const n = dir * 100 + file;
      writeFileSync(join(path, `f${file}.txt`), n % 100 === 0 ? `${body}\n${NEEDLE}\n` : `${body}\n`);
    }
  }
  return 20_000;
}

function rgDirect(rgPath, root, threads) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const args = [
      ...RIPGREP_FIXED_ARGS,
      '--threads',
      String(threads),
      '--json',
      '--case-sensitive',
      '-e',
      NEEDLE,
      '--',
      './',
    ];
    execFile(rgPath, args, { cwd: root, env: {}, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error && error.code !== 1) return reject(error);
      const matches = stdout.split('\n').filter((line) => line.includes('"type":"match"')).length;
      resolve({ ms: performance.now() - started, matches });
    });
  });
}

/**
 * fs/search over the 20 000-file tree, sandboxed cold (no pool) and warm (pool), against ripgrep
 * run directly (same binary, same flags, the helper's thread count) in the same interleaved rounds;
 * ripgrep alone at 1, 2 and 4 threads too, which is how the helper's thread count was chosen.
 */
export async function measureSearch(fixture, sandbox, runtime, rounds) {
  if (runtime.ripgrepPath === null) throw new Error('no @vscode/ripgrep binary for this platform');
  const root = join(fixture.data, 'search-tree');
  const files = createSearchTree(root);
  const cold = createBroker({ pool: false });
  const warm = createBroker({ pool: { size: 2, perKey: 2, idleMs: 600_000 } });
  const params = { path: uri(root), pattern: NEEDLE, maxResults: 10_000, sandbox };
  const timed = (broker) => async () => {
    const started = performance.now();
    const result = await broker.call('fs/search', params);
    return { ms: performance.now() - started, matches: result.matches.length };
  };
  const variants = [
    { name: 'rg direct', run: () => rgDirect(runtime.ripgrepPath, root, RIPGREP_THREADS) },
    { name: 'rg direct 1 thread', run: () => rgDirect(runtime.ripgrepPath, root, 1) },
    { name: 'rg direct 4 threads', run: () => rgDirect(runtime.ripgrepPath, root, 4) },
    { name: 'fs/search cold', run: timed(cold) },
    { name: 'fs/search warm', run: timed(warm) },
  ];
  try {
    // Warm-up (page cache, plans, the pool's first spares); every variant must find every needle.
    for (const variant of variants) {
      const { matches } = await variant.run();
      if (matches !== files / 100)
        throw new Error(`${variant.name} found ${matches} matches, not ${files / 100}`);
    }
    const samples = Object.fromEntries(variants.map((variant) => [variant.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const variant of seededShuffle(variants, round + 7)) {
        await spareReady(fixture.ws, 2);
        samples[variant.name].push((await variant.run()).ms);
      }
    }
    const stats = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
    const floor = stats['rg direct'].median;
    return {
      files,
      stats,
      ratios: {
        cold: ratio(stats['fs/search cold'].median, floor),
        warm: ratio(stats['fs/search warm'].median, floor),
      },
      samples,
    };
  } finally {
    await Promise.all([cold.close(), warm.close()]);
  }
}
