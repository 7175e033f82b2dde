import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { FsError } from '@fs-sandbox/policy';
import type { SandboxBackend } from '../backend.js';
import { buildSeatbeltLaunch, SANDBOX_EXEC_PATH } from './seatbelt-launch.js';
import { reconcileSeatbeltPaths } from './seatbelt-path-check.js';

/**
 * The macOS backend: the helper runs under `sandbox-exec` with a deny-default Seatbelt profile.
 * `prepare` reads the disk (is sandbox-exec there, do the plan's paths cross symlinks) and then
 * hands a reconciled plan to the pure builder.
 */
export function createSeatbeltBackend(): SandboxBackend {
  return {
    name: 'seatbelt',
    os: 'macos',
    async prepare(plan, runtime) {
      try {
        await access(SANDBOX_EXEC_PATH, constants.X_OK);
      } catch {
        // Without sandbox-exec there is no sandbox; running the helper bare would break the policy.
        throw new FsError('sandbox_unavailable', `${SANDBOX_EXEC_PATH} is missing or not executable`);
      }
      const reconciled = await reconcileSeatbeltPaths(plan, runtime);
      return buildSeatbeltLaunch(reconciled.plan, reconciled.runtime);
    },
  };
}
