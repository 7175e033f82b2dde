import { FsError, parseDenyGlob, type SandboxPlan, type WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { RestrictedTokenLevel } from './windows-launch-protocol.js';

/**
 * Why a restricted plan cannot run at `level` on Windows, or null when it can. Pure, so
 * `fs-sandbox explain` shows the reason on any OS. Every refusal is final: there is no fallback
 * to an unsandboxed run.
 */
export function windowsLevelRefusal(plan: SandboxPlan, level: WindowsSandboxLevel): string | null {
  if (level === 'disabled' || level === 'mxc') return unsupportedLevelRefusal(level);
  const restrictions = readRestrictions(plan);
  if (restrictions.length === 0) return null;
  // A WRITE_RESTRICTED token consults its restricting SIDs only for write access: reads still run
  // with the user's full rights, so a deny entry or a missing full-disk read would not hold.
  const elevatedNote =
    level === 'elevated'
      ? ' (enforcing reads would need the dedicated sandbox account of an elevated setup, which this broker does not provision)'
      : '';
  return `a write-restricted token cannot enforce read restrictions, and this policy restricts reads (${restrictions.join('; ')}); windowsSandboxLevel \`${level}\` refuses it rather than run with unrestricted reads${elevatedNote}`;
}

/** Why a level without a Windows sandbox refuses every restricted plan. */
export function unsupportedLevelRefusal(level: Exclude<WindowsSandboxLevel, RestrictedTokenLevel>): string {
  if (level === 'mxc') return 'windowsSandboxLevel `mxc` is not supported by this broker';
  return 'windowsSandboxLevel is `disabled`, but the policy restricts file access; Windows has no sandbox at this level and a restricted policy is never run unsandboxed';
}

/**
 * Throws `sandbox_unavailable` with the refusal reason. An unenforceable deny glob is refused
 * first, with the same `invalid_params` every platform gives it.
 */
export function assertWindowsLevelAccepts(plan: SandboxPlan, level: WindowsSandboxLevel): void {
  for (const glob of plan.denyGlobs) parseDenyGlob(glob, 'windows');
  const refusal = windowsLevelRefusal(plan, level);
  if (refusal !== null) throw new FsError('sandbox_unavailable', refusal);
}

function readRestrictions(plan: SandboxPlan): string[] {
  const found: string[] = [];
  if (!plan.fullDiskRead) found.push('no full-disk read');
  if (plan.deniedPaths.length > 0) found.push(`denied paths: ${plan.deniedPaths.join(', ')}`);
  if (plan.denyGlobs.length > 0) found.push(`deny globs: ${plan.denyGlobs.join(', ')}`);
  return found;
}
