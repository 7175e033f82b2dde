import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { helperBundlePath } from '../src/bundle-path.js';
import { buildHelper } from './support/helper-run.js';

describe('helperBundlePath', () => {
  beforeAll(buildHelper, 60_000);

  it('is the absolute path of the built dist/helper.cjs of this package', () => {
    const path = helperBundlePath({});
    expect(path).toBe(fileURLToPath(new URL('../dist/helper.cjs', import.meta.url)));
    expect(existsSync(path)).toBe(true);
  });

  it('takes an absolute FS_SANDBOX_HELPER_BUNDLE override', () => {
    expect(helperBundlePath({ FS_SANDBOX_HELPER_BUNDLE: '/opt/fs-sandbox/helper.cjs' })).toBe(
      '/opt/fs-sandbox/helper.cjs',
    );
  });

  it('refuses a relative override instead of resolving it against some cwd', () => {
    expect(() => helperBundlePath({ FS_SANDBOX_HELPER_BUNDLE: 'dist/helper.cjs' })).toThrow(
      /must be an absolute path/,
    );
  });
});
