import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { machineQuiet } from './settle.mjs';
import { rotated, summarize } from './stats.mjs';

/**
 * How long a person waits for the CLI: the wall time of a whole `fs-sandbox` process, from spawn to
 * exit, against `node -e 0` (node's own start, the floor any node program pays) in the same rounds,
 * the order rotated every round. `cat` is a sandboxed 1 KiB read (default profile: workspace-write
 * on the cwd, so the Bun self-check, the launch and one cold helper are in it); `cat --no-sandbox`
 * is the same read in-process (the program's own start and the read, nothing spawned).
 */
export async function measureCliStart(fixture, cliBin, rounds) {
  const subjects = {
    'node -e 0': [process.execPath, '-e', '0'],
    'fs-sandbox --version': [process.execPath, cliBin, '--version'],
    'fs-sandbox cat (sandboxed)': [process.execPath, cliBin, 'cat', fixture.oneKiB],
    'fs-sandbox cat --no-sandbox': [process.execPath, cliBin, 'cat', '--no-sandbox', fixture.oneKiB],
  };
  const samples = Object.fromEntries(Object.keys(subjects).map((name) => [name, []]));
  const once = ([file, ...args]) => {
    const started = performance.now();
    const run = spawnSync(file, args, { cwd: fixture.ws, stdio: ['ignore', 'pipe', 'pipe'] });
    const ms = performance.now() - started;
    if (run.status !== 0) throw new Error(`${[file, ...args].join(' ')} exited ${run.status}: ${run.stderr}`);
    return ms;
  };
  // One run of each first: the page cache holds the files the rounds read.
  for (const argv of Object.values(subjects)) once(argv);
  for (let round = 0; round < rounds; round++) {
    for (const name of rotated(Object.keys(subjects), round)) {
      await machineQuiet();
      samples[name].push(once(subjects[name]));
    }
  }
  const summary = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
  const floor = summary['node -e 0'].median;
  const ratios = Object.fromEntries(
    Object.entries(summary)
      .filter(([name]) => name !== 'node -e 0')
      .map(([name, figures]) => [name, figures.median / floor]),
  );
  return { summary, ratios };
}

/** The rows as text: each median and its ratio to `node -e 0` of the same rounds. */
export function formatCliStart({ summary, ratios }) {
  const lines = ['CLI start (wall time of the whole process, same rounds)'];
  for (const [name, figures] of Object.entries(summary)) {
    const ratio = ratios[name] === undefined ? 'the floor' : `${ratios[name].toFixed(2)}× node -e 0`;
    lines.push(
      `  ${name.padEnd(28)} median ${figures.median.toFixed(1)} ms, p90 ${figures.p90.toFixed(1)} ms (${ratio})`,
    );
  }
  return lines.join('\n');
}
