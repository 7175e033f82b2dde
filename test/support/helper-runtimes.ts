import { resolveHelperRuntime } from '@fs-sandbox/broker';

/**
 * The helper runtimes this machine runs: node always, Bun where the compiled Bun helper is built
 * and passes the broker's self-check (Linux x64/arm64 with the Bun package installed).
 */
export const HELPER_RUNTIMES: ReadonlyArray<'node' | 'bun'> =
  process.platform === 'linux' &&
  (await resolveHelperRuntime('linux', { PATH: '/usr/bin:/bin', FS_SANDBOX_HELPER_RUNTIME: 'auto' }).then(
    (runtime) => runtime.executable.kind === 'bun',
    () => false,
  ))
    ? ['node', 'bun']
    : ['node'];
