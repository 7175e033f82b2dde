// The cost of a command's executable-surface scan (packages/broker/src/runner/command-surface.ts):
// a sandboxed one-line command and a 10 000-file write burst through broker.run, and in the same
// rounds the scan alone (the walk before the command and the sweep after it) on the same trees.
// The scan is the only work the surface adds to a command's launch besides a few mounts, so
// "without the scan" is each total minus its scan, measured in the same round.
//
//   node bench/command-surface.mjs [rounds]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createBroker } from '@fs-sandbox/broker';
import { machineQuiet } from './lib/settle.mjs';
import { summarize } from './lib/stats.mjs';

const rounds = Number(process.argv[2] ?? 10);

// The scan is internal to the broker: bundled here from its source with the broker's own esbuild.
const brokerRoot = fileURLToPath(new URL('../packages/broker/', import.meta.url));
const { build } = createRequire(`${brokerRoot}package.json`)('esbuild');
const bundled = await build({
  absWorkingDir: brokerRoot,
  entryPoints: ['src/runner/command-surface.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  conditions: ['source'],
  write: false,
  logLevel: 'warning',
});
const { prepareCommandSurface } = await import(
  `data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`
);
const base = mkdtempSync('/tmp/fs-sandbox-bench-surface-');
const ws = join(base, 'ws');
// A repository with 2 000 files in 100 directories: the tree every command's scan walks.
for (let d = 0; d < 100; d++) {
  mkdirSync(join(ws, 'src', `d${d}`), { recursive: true });
  for (let f = 0; f < 20; f++) writeFileSync(join(ws, 'src', `d${d}`, `f${f}.ts`), 'export {};\n');
}
execFileSync('git', ['init', '-q', ws]);
const uri = `file://${ws}`;
const sandbox = {
  permissions: {
    type: 'managed',
    file_system: {
      type: 'restricted',
      entries: [
        { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
        { path: { type: 'path', path: uri }, access: 'write' },
      ],
    },
    network: 'restricted',
  },
  cwd: uri,
  windowsSandboxLevel: 'disabled',
};
const plan = {
  os: 'linux',
  fullDiskRead: false,
  readableRoots: [],
  writableRoots: [{ root: ws, readOnlySubpaths: [], protectedNames: ['.git', '.agents', '.codex'] }],
  deniedPaths: [],
  denyGlobs: [],
  cwd: ws,
};
// An `npm install`-like burst: 10 000 files in 1 000 directories.
const BURST =
  'mkdir -p node_modules && cd node_modules && for d in $(seq 1 1000); do mkdir p$d; for f in 0 1 2 3 4 5 6 7 8 9; do : > p$d/f$f.js; done; done';

const broker = createBroker();
const samples = { oneLine: [], oneLineScan: [], burst: [], burstScan: [] };
const scan = () => {
  const started = performance.now();
  prepareCommandSurface(plan, null).sweep();
  return performance.now() - started;
};
const run = async (argv) => {
  const started = performance.now();
  const result = await broker.run(argv, { cwd: uri, sandbox });
  if (result.exitCode !== 0 || result.stderr !== '')
    throw new Error(`${argv.join(' ')}: ${result.exitCode} ${result.stderr}`);
  return performance.now() - started;
};
await run(['/bin/true']);
for (let round = 0; round < rounds; round++) {
  await machineQuiet();
  samples.oneLine.push(await run(['/bin/true']));
  samples.oneLineScan.push(scan());
  await machineQuiet();
  samples.burst.push(await run(['/bin/sh', '-c', BURST]));
  // The sweep after the burst walks the 12 000 files; the walk before it walked 2 000.
  const before = scan();
  samples.burstScan.push(before);
  rmSync(join(ws, 'node_modules'), { recursive: true, force: true });
}
await broker.close();
rmSync(base, { recursive: true, force: true });

const m = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list).median]));
// The burst's own scan: the walk before (2 000 files) and after (12 000 files) ≈ one scan of each tree.
const burstScan = (m.oneLineScan + m.burstScan) / 2;
const line = (name, total, cost) =>
  `  ${name.padEnd(22)} ${total.toFixed(1).padStart(8)} ms  scan ${cost.toFixed(1).padStart(6)} ms  without it ${(total - cost).toFixed(1).padStart(8)} ms  ${(total / (total - cost)).toFixed(3)}x`;
console.log(
  `command surface scan, ${rounds} rounds (medians), load ${execFileSync('cat', ['/proc/loadavg']).toString().split(' ')[0]}`,
);
console.log(line('one-line (/bin/true)', m.oneLine, m.oneLineScan));
console.log(line('10 000-file burst', m.burst, burstScan));
console.log(
  `  scan alone: 2 000-file tree ${m.oneLineScan.toFixed(1)} ms (before + after), 12 000-file tree ${m.burstScan.toFixed(1)} ms`,
);
