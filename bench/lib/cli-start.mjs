import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { machineQuiet } from './settle.mjs';
import { rotated, summarize } from './stats.mjs';

/**
 * How long a person waits for the CLI: the wall time of a whole `fs-sandbox` process, from spawn to
 * exit, against `node -e 0` (node's own start, the floor any node program pays) in the same rounds,
 * the order rotated every round. `cat` is a sandboxed 1 KiB read (default profile: workspace-write
 * on the cwd, so the broker's set-up, the launch and one cold helper are in it); `cat --no-sandbox`
 * is the same read in-process (the program's own start and the read, nothing spawned). With
 * `baselineBin` (another built checkout's bin/fs-sandbox.js), its `--version`, `cat` and `cat
 * --no-sandbox` are in the same rounds, as `(baseline)`.
 */
export async function measureCliStart(fixture, cliBin, rounds, baselineBin = null) {
  const subjects = {
    'node -e 0': [process.execPath, '-e', '0'],
    'fs-sandbox --version': [process.execPath, cliBin, '--version'],
    'fs-sandbox cat (sandboxed)': [process.execPath, cliBin, 'cat', fixture.oneKiB],
    'fs-sandbox cat --no-sandbox': [process.execPath, cliBin, 'cat', '--no-sandbox', fixture.oneKiB],
    ...(baselineBin === null
      ? {}
      : {
          'fs-sandbox --version (baseline)': [process.execPath, baselineBin, '--version'],
          'fs-sandbox cat (sandboxed) (baseline)': [process.execPath, baselineBin, 'cat', fixture.oneKiB],
          'fs-sandbox cat --no-sandbox (baseline)': [
            process.execPath,
            baselineBin,
            'cat',
            '--no-sandbox',
            fixture.oneKiB,
          ],
        }),
  };
  const samples = Object.fromEntries(Object.keys(subjects).map((name) => [name, []]));
  const cpu = Object.fromEntries(Object.keys(subjects).map((name) => [name, 0]));
  const once = (name) => {
    const [file, ...args] = subjects[name];
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const run = spawnSync(file, args, { cwd: fixture.ws, stdio: ['ignore', 'pipe', 'pipe'] });
    const ms = performance.now() - started;
    if (run.status !== 0) throw new Error(`${[file, ...args].join(' ')} exited ${run.status}: ${run.stderr}`);
    cpu[name] += childrenCpuMs() - cpuBefore;
    return ms;
  };
  // One run of each first: the page cache holds the files the rounds read.
  for (const name of Object.keys(subjects)) once(name);
  for (const name of Object.keys(subjects)) cpu[name] = 0;
  for (let round = 0; round < rounds; round++) {
    for (const name of rotated(Object.keys(subjects), round)) {
      await machineQuiet();
      samples[name].push(once(name));
    }
  }
  const summary = Object.fromEntries(
    Object.entries(samples).map(([name, list]) => [
      name,
      { ...summarize(list), cpuMeanMs: cpu[name] / rounds },
    ]),
  );
  const floor = summary['node -e 0'];
  const ratios = Object.fromEntries(
    Object.entries(summary)
      .filter(([name]) => name !== 'node -e 0')
      .map(([name, figures]) => [name, figures.median / floor.median]),
  );
  const cpuRatios = Object.fromEntries(
    Object.entries(summary)
      .filter(([name]) => name !== 'node -e 0')
      .map(([name, figures]) => [name, figures.cpuMeanMs / floor.cpuMeanMs]),
  );
  return { summary, ratios, cpuRatios };
}

/**
 * The CPU time (user and system) of this process's waited-for children so far, from
 * /proc/self/stat. On a shared machine another tenant's load stretches wall times far more than
 * it stretches the CPU a start itself needs, so both are reported. Clock ticks (10 ms on Linux):
 * a sample is coarse, but the mean over the rounds is not biased by it.
 */
function childrenCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5) (cutime, cstime), counted from the state, field 3.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The rows as text: each median and mean CPU time, with their ratios to `node -e 0` of the same rounds. */
export function formatCliStart({ summary, ratios, cpuRatios }) {
  const lines = ['CLI start (wall time of the whole process, and its CPU time, same rounds)'];
  for (const [name, figures] of Object.entries(summary)) {
    const ratio = ratios[name] === undefined ? 'the floor' : `${ratios[name].toFixed(2)}× node -e 0`;
    const cpuRatio = cpuRatios[name] === undefined ? 'the floor' : `${cpuRatios[name].toFixed(2)}×`;
    lines.push(
      `  ${name.padEnd(39)} median ${figures.median.toFixed(1)} ms, p90 ${figures.p90.toFixed(1)} ms (${ratio}); ` +
        `CPU mean ${figures.cpuMeanMs.toFixed(1)} ms (${cpuRatio})`,
    );
  }
  return lines.join('\n');
}
