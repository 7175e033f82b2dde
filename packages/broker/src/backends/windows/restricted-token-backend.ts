import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { FsError, type WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { SandboxBackend } from '../backend.js';
import { buildWindowsLaunchPlan } from './windows-launch-plan.js';
import { windowsLauncherScriptPath } from './windows-launcher-path.js';
import { acceptWindowsPlan } from './windows-level.js';

export interface WindowsBackendOptions {
  /**
   * The launcher script to run, once it is known to be runnable. Default: this package's built
   * launcher, checked on this host (`installedWindowsLauncher`). `fs-sandbox explain` for another
   * host passes the location it assumes, since that host's files cannot be looked at from here.
   */
  locateLauncher?: () => string;
}

/**
 * The Windows backend for a context's level: the helper runs under a write-restricted token built
 * by the Windows launcher (a small node program using koffi). `prepare` is where the level is
 * checked against the plan; `disabled`, `mxc` and plans a restricted token cannot enforce are
 * refused there with the reason, so a restricted policy never runs unsandboxed.
 */
export function createWindowsBackend(
  level: WindowsSandboxLevel,
  options: WindowsBackendOptions = {},
): SandboxBackend {
  const locateLauncher = options.locateLauncher ?? (() => installedWindowsLauncher());
  return {
    name: 'restricted-token',
    os: 'windows',
    async prepare(plan, runtime) {
      // The policy decides first: a plan this level cannot enforce is refused for that reason,
      // whatever else is missing on this machine.
      const accepted = acceptWindowsPlan(plan, level);
      return buildWindowsLaunchPlan(accepted, runtime, locateLauncher());
    },
  };
}

/** The launcher script, refused (`sandbox_unavailable`) unless it and koffi are installed here. */
export function installedWindowsLauncher(launcher: string = windowsLauncherScriptPath()): string {
  if (!existsSync(launcher)) {
    throw new FsError(
      'sandbox_unavailable',
      `the Windows launcher ${launcher} is missing; build it with \`pnpm run build\``,
    );
  }
  try {
    createRequire(launcher).resolve('koffi');
  } catch {
    throw new FsError(
      'sandbox_unavailable',
      'the restricted-token sandbox needs the optional dependency koffi, which is not installed',
    );
  }
  return launcher;
}
