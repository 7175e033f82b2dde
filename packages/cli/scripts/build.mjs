// Builds the `fs-sandbox` program: dist/cli.cjs (one CommonJS file with the broker, the policy and
// their dependencies bundled from the workspace's sources; ws, koffi, @vscode/ripgrep and the MCP
// SDK stay run-time requires), its V8 code cache (code-cache.mjs; bin/load.cjs starts the program
// from it), and dist/windows-launcher.js (the broker's Windows launcher, which the bundled
// restricted-token backend finds beside the package's own manifest). CommonJS, because a code cache
// needs a vm script, and node 20 runs ES modules only through its own loader, which has none; the
// verbs' modules are still evaluated only when their verb runs (main.ts imports them dynamically,
// and esbuild initialises such modules on first use). The CLI runs the helper from
// @fs-sandbox/helper's dist, so that is built first when it is missing (the root build already
// orders packages topologically).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeCodeCache } from './code-cache.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const helperRoot = fileURLToPath(new URL('../../helper/', import.meta.url));

if (!existsSync(`${helperRoot}dist/helper.cjs`)) {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: helperRoot, stdio: 'inherit' });
}

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Workspace packages resolve from their TypeScript sources, as in tests.
  conditions: ['source'],
  logLevel: 'warning',
  legalComments: 'none',
};

/**
 * zod's messages in English only. Its 64 locales were a quarter of the bundle's bytes, and every
 * start pays for bytes: the bundle is read and its code cache deserialized whole. The program
 * never switches zod's language (the policy words its messages itself, serde-messages.ts), so
 * `zod/v4/locales/index.js` is bundled as its English entry alone; zod's default, `en`, is what
 * zod imports directly anyway.
 */
const englishZod = {
  name: 'english-zod',
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}zod${sep}`)
        ? { path: resolve(args.resolveDir, args.path), namespace: 'english-zod' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'english-zod' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

await Promise.all([
  build({
    ...common,
    format: 'cjs',
    plugins: [englishZod],
    entryPoints: { cli: 'src/cli/bin.ts' },
    outExtension: { '.js': '.cjs' },
    outdir: 'dist',
    // @vscode/ripgrep finds its per-platform binary relative to its own installed location.
    external: ['ws', 'koffi', '@vscode/ripgrep', '@modelcontextprotocol/sdk'],
    // Fewer bytes to read and to hash against the cache at every start.
    minify: true,
    // The bundled modules that locate their package (own code, the helper, the launcher) ask
    // import.meta.url: in CommonJS that is the bundle's own file.
    define: { 'import.meta.url': '__fsSandboxBundleUrl' },
    // A vm script (bin/load.cjs) has no import() in node 20: the modules it loads on demand (the
    // MCP SDK, ws, ripgrep, koffi) are required instead.
    supported: { 'dynamic-import': false },
    banner: { js: "var __fsSandboxBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
  // node runs it in place of the helper to start it under a restricted token; koffi, its native
  // FFI, stays a runtime import.
  build({
    ...common,
    entryPoints: { 'windows-launcher': '@fs-sandbox/broker/windows-launcher' },
    outdir: 'dist',
    external: ['koffi'],
  }),
]);

assertAscii(`${root}dist/cli.cjs`);
writeCodeCache();

/**
 * bin/load.cjs reads the bundle as latin1 (no decoding), which reads it right only while it is
 * ASCII. esbuild escapes other characters in strings, but not inside a regular expression's
 * character class: a source that writes one there must spell it as an escape.
 */
function assertAscii(file) {
  const bytes = readFileSync(file);
  const at = bytes.findIndex((byte) => byte > 0x7f);
  if (at !== -1) {
    const context = bytes.subarray(Math.max(0, at - 60), at + 20).toString('utf8');
    throw new Error(
      `${file} is not ASCII at byte ${at} (…${context}…): write the character as an escape in its source`,
    );
  }
}
