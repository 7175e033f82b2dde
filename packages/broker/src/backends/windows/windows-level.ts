import { FsError, parseDenyGlob, type SandboxPlan, type WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { RestrictedTokenLevel } from './windows-launch-protocol.js';

declare const accepted: unique symbol;

/**
 * A plan that a restricted-token level has accepted. Only `acceptWindowsPlan` makes one, so the pure
 * builders, which take nothing else, cannot be handed a plan whose level was never checked.
 */
export interface AcceptedWindowsPlan {
  readonly plan: SandboxPlan;
  readonly level: RestrictedTokenLevel;
  readonly [accepted]: true;
}

/**
 * The one check of a plan against the context's Windows level (the backend's `prepare` makes it).
 * Every refusal is `sandbox_unavailable` and final: there is no fallback to an unsandboxed run. An
 * unenforceable deny glob is refused first, with the same `invalid_params` every platform gives it.
 */
export function acceptWindowsPlan(plan: SandboxPlan, level: WindowsSandboxLevel): AcceptedWindowsPlan {
  for (const glob of plan.denyGlobs) parseDenyGlob(glob, 'windows');
  if (level === 'disabled' || level === 'mxc') {
    throw new FsError('sandbox_unavailable', unsupportedLevelRefusal(level));
  }
  const restrictions = readRestrictions(plan);
  if (restrictions.length > 0) {
    throw new FsError('sandbox_unavailable', readRestrictionRefusal(level, restrictions));
  }
  return { plan, level } as AcceptedWindowsPlan;
}

function unsupportedLevelRefusal(level: Exclude<WindowsSandboxLevel, RestrictedTokenLevel>): string {
  if (level === 'mxc') return 'windowsSandboxLevel `mxc` is not supported by this broker';
  return 'windowsSandboxLevel is `disabled`, but the policy restricts file access; Windows has no sandbox at this level and a restricted policy is never run unsandboxed';
}

/**
 * A WRITE_RESTRICTED token consults its restricting SIDs only for write access: reads still run with
 * the user's full rights, so a deny entry or a missing full-disk read would not hold.
 */
function readRestrictionRefusal(level: RestrictedTokenLevel, restrictions: string[]): string {
  const elevatedNote =
    level === 'elevated'
      ? ' (enforcing reads would need the dedicated sandbox account of an elevated setup, which this broker does not provision)'
      : '';
  return `a write-restricted token cannot enforce read restrictions, and this policy restricts reads (${restrictions.join('; ')}); windowsSandboxLevel \`${level}\` refuses it rather than run with unrestricted reads${elevatedNote}`;
}

function readRestrictions(plan: SandboxPlan): string[] {
  const found: string[] = [];
  if (!plan.fullDiskRead) found.push('no full-disk read');
  if (plan.deniedPaths.length > 0) found.push(`denied paths: ${plan.deniedPaths.join(', ')}`);
  if (plan.denyGlobs.length > 0) found.push(`deny globs: ${plan.denyGlobs.join(', ')}`);
  return found;
}
