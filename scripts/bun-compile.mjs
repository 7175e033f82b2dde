// The Bun helper: the helper program compiled with Bun into one standalone executable (Bun's
// runtime, the program and its JavaScriptCore bytecode in a single file). Measured on a 1 KiB read
// (bench/run.mjs), it starts in about a third of the time Bun needs to run the same bundle as a
// script: a script is re-parsed (or its bytecode file looked up and checked) on every start, and
// the Bun command line is parsed and its config files searched for. The executable does neither.
//
// What the standalone executable reads unasked is fixed here, at compile time, and the defaults
// are the wrong way round for a sandboxed helper: it would load `.env` files and `bunfig.toml`
// (whose `preload` runs code before the program) from its working directory, the sandbox cwd an
// agent controls. Each flag below turns one off; tsconfig.json and package.json are off by
// default and are turned off explicitly all the same, so a change of default cannot turn them on.
// `--no-addons` is compiled into the executable's own arguments: the helper loads no native code.
// Auto-install does not exist in a standalone executable. BUN_* variables (BUN_OPTIONS adds
// arguments) never reach the helper: its environment is an allowlist (policy helper-env.ts).

import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const COMPILE_FLAGS = [
  '--compile',
  '--bytecode',
  '--no-compile-autoload-dotenv',
  '--no-compile-autoload-bunfig',
  '--no-compile-autoload-tsconfig',
  '--no-compile-autoload-package-json',
  '--compile-exec-argv=--no-addons',
];

const require = createRequire(import.meta.url);

/**
 * Bun's per-platform packages, glibc build first: optional dependencies of the workspace root (this
 * file is the workspace's, not a package's), so they are installed where the helper is built and
 * never by a user of the published packages, who gets the compiled helper instead (bunHelperOutput).
 */
const BUN_PACKAGES = {
  x64: [
    () => require.resolve('@oven/bun-linux-x64/package.json'),
    () => require.resolve('@oven/bun-linux-x64-musl/package.json'),
  ],
  arm64: [
    () => require.resolve('@oven/bun-linux-aarch64/package.json'),
    () => require.resolve('@oven/bun-linux-aarch64-musl/package.json'),
  ],
};

/**
 * The installed Bun executable for this machine, or null: Bun runs the helper only on Linux x64
 * and arm64, and npm installs a platform package only where it fits (or not at all).
 */
export function bunExecutable() {
  if (process.platform !== 'linux') return null;
  for (const manifest of BUN_PACKAGES[process.arch] ?? []) {
    let bun;
    try {
      bun = join(dirname(manifest()), 'bin', 'bun');
      execFileSync(bun, ['--version'], { stdio: 'ignore', env: {} });
    } catch {
      continue;
    }
    return bun;
  }
  return null;
}

/**
 * Where this machine's Bun helper goes: `bin/helper-bun` of the helper's per-platform package
 * (`@fs-sandbox/helper-linux-x64`, `-linux-arm64`), the optional dependency of this package that
 * the resolver (packages/helper/src/bundle-path.ts, which names the package the same way) finds it in. In the
 * workspace that package is a link to packages/helper-<platform>-<arch>, so the root build puts
 * the binary where an installed copy would have it. null where Bun does not run the helper or no
 * such package is installed.
 */
export function bunHelperOutput() {
  if (process.platform !== 'linux' || BUN_PACKAGES[process.arch] === undefined) return null;
  const fromHelper = createRequire(
    fileURLToPath(new URL('../packages/helper/package.json', import.meta.url)),
  );
  try {
    const manifest = fromHelper.resolve(
      `@fs-sandbox/helper-${process.platform}-${process.arch}/package.json`,
    );
    return join(realpathSync(dirname(manifest)), 'bin', 'helper-bun');
  } catch {
    return null;
  }
}

/**
 * Compiles a single-file CommonJS program into a standalone Bun executable at `outfile`, through a
 * temp name and a rename (a helper spawned while the build runs never sees half a file).
 */
export function compileWithBun(bun, program, outfile) {
  const temp = `${outfile}.${process.pid}.tmp`;
  mkdirSync(dirname(outfile), { recursive: true });
  try {
    execFileSync(bun, ['build', program, ...COMPILE_FLAGS, '--outfile', temp], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    renameSync(temp, outfile);
  } finally {
    rmSync(temp, { force: true });
  }
}
