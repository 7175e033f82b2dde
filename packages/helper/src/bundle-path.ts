import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { FsError } from '@fs-sandbox/policy/core';

const OVERRIDE = 'FS_SANDBOX_HELPER_BUNDLE';

/**
 * Absolute path of the single-file helper program (packages/helper/dist/helper.cjs), which the
 * broker hands to the sandbox as an exact readable file. It is found through the package's own
 * `./helper.cjs` export, resolved from this module's location, so the answer is the same whether
 * this code runs from source (vitest), from dist, or bundled into the broker. An override must be
 * absolute: a relative one would depend on whichever cwd the broker happens to have.
 */
export function helperBundlePath(env: Record<string, string | undefined> = process.env): string {
  const override = env[OVERRIDE];
  if (override !== undefined && override !== '') {
    if (!isAbsolute(override)) {
      throw new FsError('internal_error', `${OVERRIDE} must be an absolute path, got \`${override}\``);
    }
    return override;
  }
  try {
    return createRequire(import.meta.url).resolve('@fs-sandbox/helper/helper.cjs');
  } catch {
    throw new FsError(
      'internal_error',
      'the helper bundle is missing: build it with `pnpm --filter @fs-sandbox/helper build`',
    );
  }
}
