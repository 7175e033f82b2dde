import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { FsError, type WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { SandboxBackend } from '../backend.js';
import { buildWindowsLaunchPlan } from './windows-launch-plan.js';
import type { RestrictedTokenLevel } from './windows-launch-protocol.js';
import { windowsLauncherScriptPath } from './windows-launcher-path.js';
import { assertWindowsLevelAccepts, unsupportedLevelRefusal } from './windows-level.js';

/**
 * The Windows backend: the helper runs under a write-restricted token built by the Windows launcher
 * (a small node program using koffi). `prepare` checks that the launcher and koffi are there, then
 * hands the plan to the pure builder, which refuses plans a restricted token cannot enforce.
 */
export function createRestrictedTokenBackend(
  level: RestrictedTokenLevel,
  options: { launcherScript?: string } = {},
): SandboxBackend {
  return {
    name: 'restricted-token',
    os: 'windows',
    async prepare(plan, runtime) {
      // The policy decides first: a plan this level cannot enforce is refused for that reason,
      // whatever else is missing on this machine.
      assertWindowsLevelAccepts(plan, level);
      const launcher = options.launcherScript ?? windowsLauncherScriptPath();
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
      return buildWindowsLaunchPlan(plan, runtime, level, launcher);
    },
  };
}

/**
 * The backend for a context's Windows level. `disabled` and unsupported levels get a backend that
 * refuses every plan with the reason: a restricted policy never runs unsandboxed.
 */
export function createWindowsBackend(level: WindowsSandboxLevel): SandboxBackend {
  if (level === 'restricted-token' || level === 'elevated') return createRestrictedTokenBackend(level);
  const refusal = unsupportedLevelRefusal(level);
  return {
    name: 'restricted-token',
    os: 'windows',
    async prepare() {
      throw new FsError('sandbox_unavailable', refusal);
    },
  };
}
