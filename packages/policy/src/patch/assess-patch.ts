import type { HostOs } from '../host-os.js';
import { checkAccess } from '../permissions/access.js';
import type { PermissionProfile, WindowsSandboxLevel } from '../schemas/sandbox-context.js';

/**
 * Whether a patch may be applied without asking, as the reference's `assess_patch_safety` decides:
 *
 * 1. a patch with no changes is rejected;
 * 2. `unless-trusted` asks for every patch;
 * 3. a patch whose every source and move destination is writable under the policy (or any patch
 *    under `on-failure`, which runs it sandboxed and lets the sandbox refuse) is approved: without a
 *    platform sandbox for a disabled or external profile (they isolate nothing, or leave it to the
 *    caller), and for a managed profile only when a platform sandbox will confine it (else ask);
 * 4. otherwise `never`, and `granular` without `sandbox_approval`, reject; the rest ask.
 *
 * A full-disk-write or unrestricted managed profile counts as constrained (everything is writable).
 * Pure: the paths are the patch's absolute native paths, the profile the resolved one.
 */

export type ApprovalPolicy =
  | 'never'
  | 'on-request'
  | 'on-failure'
  | 'unless-trusted'
  | { granular: { sandbox_approval: boolean } };

export type PatchPolicyScope =
  /** No sandbox context, or one that turns isolation off or leaves it to the caller. */
  | { kind: 'unisolated' }
  /** A managed profile; `profile` is null when it restricts nothing (unrestricted, full-disk write). */
  | { kind: 'managed'; profile: PermissionProfile | null; windowsSandboxLevel: WindowsSandboxLevel };

export interface PatchTarget {
  path: string;
  movePath?: string | null;
}

export type PatchSafety =
  | { decision: 'approve'; sandboxed: boolean }
  | { decision: 'ask'; reason: string }
  | { decision: 'reject'; reason: string };

export const OUTSIDE_REJECTED = 'writing outside of the project; rejected by user approval settings';

export function assessPatchSafety(
  targets: readonly PatchTarget[],
  policy: ApprovalPolicy,
  scope: PatchPolicyScope,
  os: HostOs,
): PatchSafety {
  if (targets.length === 0) return { decision: 'reject', reason: 'empty patch' };
  if (policy === 'unless-trusted') {
    return { decision: 'ask', reason: 'the approval policy `unless-trusted` asks before every patch' };
  }
  const outside = firstUnwritable(targets, scope, os);
  if (outside === null || policy === 'on-failure') {
    if (scope.kind === 'unisolated') return { decision: 'approve', sandboxed: false };
    if (hasPlatformSandbox(os, scope.windowsSandboxLevel)) return { decision: 'approve', sandboxed: true };
    return { decision: 'ask', reason: 'no platform sandbox is available on this host to confine the patch' };
  }
  if (policy === 'never' || (typeof policy === 'object' && !policy.granular.sandbox_approval)) {
    return { decision: 'reject', reason: `${OUTSIDE_REJECTED} (${outside})` };
  }
  return { decision: 'ask', reason: `writing outside of the project (${outside}) needs approval` };
}

/** As the reference's `get_platform_sandbox`: Seatbelt and bwrap always, Windows unless turned off. */
function hasPlatformSandbox(os: HostOs, windowsLevel: WindowsSandboxLevel): boolean {
  return os !== 'windows' || windowsLevel !== 'disabled';
}

function firstUnwritable(
  targets: readonly PatchTarget[],
  scope: PatchPolicyScope,
  os: HostOs,
): string | null {
  if (scope.kind === 'unisolated' || scope.profile === null) return null;
  const { profile } = scope;
  for (const { path, movePath } of targets) {
    for (const candidate of movePath == null ? [path] : [path, movePath]) {
      if (!checkAccess(profile, candidate, 'write', os).allowed) return candidate;
    }
  }
  return null;
}
