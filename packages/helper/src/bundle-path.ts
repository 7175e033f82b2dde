import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { FsError } from '@fs-sandbox/policy/core';

const OVERRIDE = 'FS_SANDBOX_HELPER_BUNDLE';

/** The helper program for node: a script with a V8 code cache, this package's own export. */
const NODE_PROGRAM = '@fs-sandbox/helper/helper.cjs';

/**
 * The package that carries the Bun helper for this machine, `@fs-sandbox/helper-linux-x64` or
 * `-linux-arm64`: the same program compiled with Bun into one executable (runtime, program and
 * bytecode: the repository's scripts/bun-compile.mjs says why, and builds it into the package of the
 * machine that builds). One package per platform, each an optional dependency of this one with `os`,
 * `cpu` and `libc` fields, as esbuild and @vscode/ripgrep ship their binaries: a user downloads
 * only the binary that runs on their machine, and none where there is none (then node runs the helper).
 */
export function bunHelperPackage(platform: string = process.platform, arch: string = process.arch): string {
  return `@fs-sandbox/helper-${platform}-${arch}`;
}

/** Each platform package's executable, resolved from this package (whose optional dependencies they are). */
const BUN_HELPERS: Readonly<Record<string, (fromHelper: NodeJS.Require) => string>> = {
  '@fs-sandbox/helper-linux-x64': (fromHelper) =>
    fromHelper.resolve('@fs-sandbox/helper-linux-x64/bin/helper-bun'),
  '@fs-sandbox/helper-linux-arm64': (fromHelper) =>
    fromHelper.resolve('@fs-sandbox/helper-linux-arm64/bin/helper-bun'),
};

/**
 * Absolute path of the single-file helper program for a runtime (packages/helper/dist/helper.cjs,
 * or the executable bin/helper-bun of this platform's helper package), which the broker hands to
 * the sandbox as an exact readable file. Both are found through package resolution from this
 * package's own program, so the answer is the same whether this code runs from source (vitest), from
 * dist, or bundled into the broker or the CLI, and under pnpm's strict layout, where only this
 * package sees its optional dependencies. An override must be absolute: a relative one would
 * depend on whichever cwd the broker happens to have.
 */
export function helperBundlePath(
  env: Record<string, string | undefined> = process.env,
  runtime: 'node' | 'bun' = 'node',
): string {
  const override = env[OVERRIDE];
  if (override !== undefined && override !== '') {
    if (!isAbsolute(override)) {
      throw new FsError('internal_error', `${OVERRIDE} must be an absolute path, got \`${override}\``);
    }
    return override;
  }
  let nodeProgram: string;
  try {
    nodeProgram = createRequire(import.meta.url).resolve(NODE_PROGRAM);
  } catch {
    throw new FsError(
      'internal_error',
      'the helper bundle is missing: build it with `pnpm --filter @fs-sandbox/helper build`',
    );
  }
  if (runtime === 'node') return nodeProgram;
  const bunPackage = bunHelperPackage();
  try {
    const resolve = BUN_HELPERS[bunPackage];
    if (resolve === undefined) throw new Error('no such package');
    return resolve(createRequire(nodeProgram));
  } catch {
    throw new FsError(
      'internal_error',
      `${bunPackage} (the Bun helper for this platform, an optional dependency of @fs-sandbox/helper) is not installed, or in a checkout of fs-sandbox not built`,
    );
  }
}
