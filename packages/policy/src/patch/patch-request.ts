import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import type { TouchedPath } from '../touched-path.js';
import { type ApprovalPolicy, assessPatchSafety, type PatchPolicyScope } from './assess-patch.js';
import { parsePatch } from './parse-patch.js';
import { resolvePatchTargets } from './patch-targets.js';

/**
 * What the method table needs to know about an `fs/applyPatch` request before a helper runs: the
 * files its patch touches (for the pre-check and the temp clean-up; the params name only `cwd`)
 * and the safety assessment's answer. The patch is parsed here, at the broker, so a malformed one
 * fails as `patch_parse_error` before any sandbox exists; the helper parses it again for itself.
 */

/** The params these read (structurally: the method table's types are built from this very entry). */
interface ApplyPatchParams {
  patch: string;
  cwd: string;
  approvalPolicy: ApprovalPolicy;
}

export interface PatchChange {
  path: string;
  kind: 'add' | 'delete' | 'update';
  movePath?: string;
}

export function patchChanges(params: ApplyPatchParams, os: HostOs): PatchChange[] {
  return resolvePatchTargets(parsePatch(params.patch), params.cwd, os).map(({ hunk, path, movePath }) =>
    movePath === null ? { path, kind: hunk.kind } : { path, kind: hunk.kind, movePath },
  );
}

/** The patch's files as touched paths: added and updated files are written, deleted and moved-away ones removed. */
export function patchTouchedPaths(params: ApplyPatchParams, os: HostOs): TouchedPath[] {
  return patchChanges(params, os).flatMap(({ path, kind, movePath }): TouchedPath[] => {
    if (kind === 'delete') return [{ field: 'patch', path, access: 'remove' }];
    if (movePath === undefined) return [{ field: 'patch', path, access: 'write' }];
    return [
      { field: 'patch', path, access: 'remove' },
      { field: 'patch', path: movePath, access: 'write' },
    ];
  });
}

/**
 * The assessment's answer as the method's result: null to go ahead, `needs_approval` (nothing
 * written) when it asks; a rejection throws `patch_rejected` with the reason.
 */
export function admitPatch(params: ApplyPatchParams, scope: PatchPolicyScope, os: HostOs) {
  const changes = patchChanges(params, os);
  const safety = assessPatchSafety(changes, params.approvalPolicy, scope, os);
  if (safety.decision === 'approve') return null;
  if (safety.decision === 'ask') return { status: 'needs_approval' as const, reason: safety.reason, changes };
  throw new FsError('patch_rejected', `patch rejected: ${safety.reason}`, { reason: safety.reason });
}
