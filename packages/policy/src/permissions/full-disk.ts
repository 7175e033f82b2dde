import { isRestrictedProfile, type PermissionProfile } from '../schemas/sandbox-context.js';

/**
 * Whole-disk shortcuts (full-disk read and write). Both are computed on the entries as written, before
 * `project_roots`/`tmpdir` are materialised: an entry that would vanish for lack of a workspace
 * root or temp dir still counts as narrowing, so a missing value can never turn a restricted
 * policy into an unsandboxed run.
 */

function isRoot(entry: { path: { type: string; value?: { kind: string } } }): boolean {
  return entry.path.type === 'special' && entry.path.value?.kind === 'root';
}

/** `root:read` (or `root:write`) and no deny entry of any kind: the base layer is the whole disk, read-only. */
export function hasFullDiskRead(profile: PermissionProfile): boolean {
  if (!isRestrictedProfile(profile)) return true;
  const entries = profile.file_system.entries;
  return entries.some((e) => isRoot(e) && e.access !== 'deny') && !entries.some((e) => e.access === 'deny');
}

/**
 * `root:write` and nothing that narrows it: every entry grants write. An unknown special kind
 * counts as narrowing because we cannot tell what it covers; when in doubt the sandbox runs.
 */
export function hasFullDiskWrite(profile: PermissionProfile): boolean {
  if (!isRestrictedProfile(profile)) return true;
  const entries = profile.file_system.entries;
  const unknown = (e: (typeof entries)[number]): boolean =>
    e.path.type === 'special' && e.path.value.kind === 'unknown';
  return (
    entries.some((e) => isRoot(e) && e.access === 'write') &&
    entries.every((e) => e.access === 'write' && !unknown(e))
  );
}
