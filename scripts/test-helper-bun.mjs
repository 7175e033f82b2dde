// The helper's unit suites again, run by Bun itself (the compiled Bun helper's runtime), so what
// differs between Bun's node:fs and node's shows up at the level of each operation, not only end to
// end. vitest runs under `bun --bun` with its vmForks pool: under its default pool Bun fails to
// load zod into the suites (`z` is undefined). Where no Bun package is installed for this platform
// the helper never runs under Bun, and this says so.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bunExecutable } from './bun-compile.mjs';

const bun = bunExecutable();
if (bun === null) {
  console.log('test:helper-bun: no Bun package for this platform, so the helper runs under node only');
  process.exit(0);
}
// vitest's command-line entry (its `bin`, which the package does not export as a module path).
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const args = [
  '--bun',
  vitest,
  'run',
  '--project',
  'unit',
  'packages/helper/test',
  '--pool=vmForks',
  '--reporter=default',
  '--reporter=json',
  '--outputFile.json=test-results-helper-bun.json',
];
const run = spawnSync(bun, args, { stdio: 'inherit' });
process.exit(run.status ?? 1);
