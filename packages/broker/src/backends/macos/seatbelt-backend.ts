import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { FsError } from '@fs-sandbox/policy';
import type { SandboxBackend } from '../backend.js';
import { buildSeatbeltLaunch, SANDBOX_EXEC_PATH } from './seatbelt-launch.js';
import { type PathCheckDeps, reconcileSeatbeltPaths } from './seatbelt-path-check.js';

/** What the Seatbelt backend reads from the host; the defaults read this machine now. */
export interface SeatbeltBackendOptions {
  /** Refuses with `sandbox_unavailable` unless sandbox-exec can run. */
  checkSandboxExec?: () => Promise<void>;
  /** How the plan's paths resolve (see seatbelt-path-check.ts). */
  paths?: PathCheckDeps;
}

/**
 * The macOS backend: the helper runs under `sandbox-exec` with a deny-default Seatbelt profile.
 * `prepare` reads the disk (is sandbox-exec there, do the plan's paths cross symlinks) and then
 * hands a reconciled plan to the pure builder.
 */
export function createSeatbeltBackend(options: SeatbeltBackendOptions = {}): SandboxBackend {
  const checkSandboxExec = options.checkSandboxExec ?? sandboxExecIsInstalled;
  return {
    name: 'seatbelt',
    os: 'macos',
    async prepare(plan, runtime) {
      await checkSandboxExec();
      const reconciled = await reconcileSeatbeltPaths(plan, runtime, options.paths);
      return buildSeatbeltLaunch(reconciled.plan, reconciled.runtime);
    },
  };
}

async function sandboxExecIsInstalled(): Promise<void> {
  try {
    await access(SANDBOX_EXEC_PATH, constants.X_OK);
  } catch {
    // Without sandbox-exec there is no sandbox; running the helper bare would break the policy.
    throw new FsError('sandbox_unavailable', `${SANDBOX_EXEC_PATH} is missing or not executable`);
  }
}
