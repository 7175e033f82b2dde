import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { FsError } from '@fs-sandbox/policy/core';

const OVERRIDE = 'FS_SANDBOX_HELPER_BUNDLE';

/**
 * The helper program is built once per runtime: `helper.cjs`, a script for node (with a V8 code
 * cache), and `helper-bun`, the same program compiled with Bun into one executable (runtime,
 * program and bytecode: scripts/bun-compile.mjs says why).
 */
const BUNDLE_EXPORT = {
  node: '@fs-sandbox/helper/helper.cjs',
  bun: '@fs-sandbox/helper/helper-bun',
} as const;

/**
 * Absolute path of the single-file helper program for a runtime (packages/helper/dist/helper.cjs or
 * the executable helper-bun), which the broker hands to the sandbox as an exact readable file. It is found
 * through the package's own export, resolved from this module's location, so the answer is the same whether
 * this code runs from source (vitest), from dist, or bundled into the broker. An override must be
 * absolute: a relative one would depend on whichever cwd the broker happens to have.
 */
export function helperBundlePath(
  env: Record<string, string | undefined> = process.env,
  runtime: keyof typeof BUNDLE_EXPORT = 'node',
): string {
  const override = env[OVERRIDE];
  if (override !== undefined && override !== '') {
    if (!isAbsolute(override)) {
      throw new FsError('internal_error', `${OVERRIDE} must be an absolute path, got \`${override}\``);
    }
    return override;
  }
  try {
    return createRequire(import.meta.url).resolve(BUNDLE_EXPORT[runtime]);
  } catch {
    throw new FsError(
      'internal_error',
      'the helper bundle is missing: build it with `pnpm --filter @fs-sandbox/helper build`',
    );
  }
}
