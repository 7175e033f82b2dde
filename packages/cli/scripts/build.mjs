// Builds the `fs-sandbox` program: dist/cli.js (one ESM file with the broker, the policy and their
// dependencies bundled from the workspace's sources; ws, koffi, @vscode/ripgrep and the MCP SDK
// stay runtime imports) and dist/windows-launcher.js (the broker's Windows launcher, which the
// bundled restricted-token backend finds beside the package's own manifest). The CLI runs the
// helper from @fs-sandbox/helper's dist, so that is built first when it is missing (the root build
// already orders packages topologically).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

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

await Promise.all([
  build({
    ...common,
    entryPoints: { cli: 'src/cli/bin.ts' },
    outdir: 'dist',
    // @vscode/ripgrep finds its per-platform binary relative to its own installed location.
    external: ['ws', 'koffi', '@vscode/ripgrep', '@modelcontextprotocol/sdk'],
    // One process per `fs-sandbox call`: a minified bundle compiles faster at every start.
    minify: true,
    // Bundled CommonJS dependencies (commander) call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __fsSandboxRequire } from 'node:module';\nconst require = __fsSandboxRequire(import.meta.url);",
    },
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
