// Builds the broker library: dist/index.js, dist/remote.js and dist/acp.js (dependencies external)
// and dist/windows-launcher.js. The `fs-sandbox` program is packages/cli, which bundles this
// package from source.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

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
  // The Windows launcher (node runs it in place of the helper to start it under a restricted
  // token); koffi, its native FFI, stays a runtime import.
  build({
    ...common,
    entryPoints: { 'windows-launcher': 'src/backends/windows/launcher/windows-launcher-main.ts' },
    outdir: 'dist',
    external: ['koffi'],
  }),
  build({
    ...common,
    entryPoints: { index: 'src/index.ts', remote: 'src/remote/index.ts', acp: 'src/acp/index.ts' },
    outdir: 'dist',
    packages: 'external',
  }),
]);
