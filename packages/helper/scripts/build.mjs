// Builds the helper: dist/helper.cjs (the program: one minified CommonJS file, no source map, so
// node loads and compiles as little as possible on every start), the same program compiled with
// Bun into one executable, where a Bun package is installed, into this platform's helper package
// (packages/helper-linux-x64/bin/helper-bun: scripts/bun-compile.mjs at the root) and the ESM library entries.
// Each output is written to a temp name and renamed into place, so a helper being spawned while a
// build runs (tests build before they spawn) never sees a half-written file.

import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bunExecutable, bunHelperOutput, compileWithBun } from '../../../scripts/bun-compile.mjs';
import { withCodeCache } from './code-cache.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Resolve sibling workspace packages from their TypeScript sources (no prior policy build needed).
  conditions: ['source'],
  logLevel: 'warning',
  // Only the Bun helper's --landlock mode loads it, and only under Bun.
  external: ['bun:ffi'],
  legalComments: 'none',
  write: false,
};

const [nodeProgram, bunProgram, library] = await Promise.all([
  build({
    ...common,
    entryPoints: ['src/main.ts'],
    outfile: 'dist/helper.cjs',
    format: 'cjs',
    minify: true,
    sourcemap: false,
    // The program runs from a vm script (its code cache, see code-cache.mjs), where node 20 has no
    // import(): modules it loads on demand are required instead.
    supported: { 'dynamic-import': false },
  }),
  build({
    ...common,
    entryPoints: ['src/main.ts'],
    // Only the input of the Bun compile below, never written under this name.
    outfile: 'dist/helper-bun.cjs',
    format: 'cjs',
    minify: true,
    sourcemap: false,
  }),
  build({
    ...common,
    entryPoints: ['src/index.ts', 'src/bundle-path.ts'],
    outdir: 'dist',
    format: 'esm',
    packages: 'external',
  }),
]);

for (const file of [...nodeProgram.outputFiles, ...library.outputFiles]) {
  mkdirSync(dirname(file.path), { recursive: true });
  const temp = `${file.path}.${process.pid}.tmp`;
  // The program ships with a V8 code cache of itself (a faster start, see code-cache.mjs).
  writeFileSync(temp, file.path.endsWith('helper.cjs') ? withCodeCache(file.text) : file.contents);
  renameSync(temp, file.path);
}

// Where builds before the per-platform packages put the Bun helper (110 MB, no longer run).
rmSync(join(root, 'dist', 'helper-bun'), { force: true });

// The Bun helper, compiled from its bundle, or none: a Bun helper left from an earlier build would
// run that build's code.
const bunHelper = bunHelperOutput();
const bun = bunExecutable();
if (bunHelper === null || bun === null) {
  if (bunHelper !== null) rmSync(bunHelper, { force: true });
  console.log(
    '@fs-sandbox/helper: no Bun package or no helper package for this platform, so no Bun helper (node runs the helper)',
  );
} else {
  const program = join(root, 'dist', `helper-bun.${process.pid}.cjs`);
  try {
    writeFileSync(program, bunProgram.outputFiles[0].contents);
    compileWithBun(bun, program, bunHelper);
  } finally {
    rmSync(program, { force: true });
  }
}
