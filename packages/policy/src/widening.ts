import type { HostOs } from './host-os.js';
import { nativeToPathUri } from './path-uri.js';
import { accessFor } from './permissions/access.js';
import { hasFullDiskRead } from './permissions/full-disk.js';
import {
  type FileSystemEntry,
  isRestrictedProfile,
  type PermissionProfile,
  type RestrictedProfile,
} from './schemas/sandbox-context.js';

export interface HelperRuntimeReads {
  os: HostOs;
  /** Native absolute paths of the exact files the helper needs (node executable, helper bundle). */
  helperFiles: string[];
  /** Native absolute platform minimal roots that exist on this host. */
  minimalRootsPresent: string[];
}

/**
 * The profile plus what the helper process itself needs to start: the platform
 * minimal roots when the policy lacks full-disk read, and read access to the exact helper files —
 * the files, not their folders, which may hold anything (credentials next to a bundle). `minimal`
 * entries become the roots that exist, so the result is concrete enough for buildSandboxPlan.
 *
 * A grant is added only where the path is currently unmatched: a path the policy already lets the
 * helper read or write needs nothing (and a read entry there would make a writable file read-only),
 * and a path an entry denies stays denied — widening never weakens a deny. Unrestricted, disabled
 * and external profiles are returned untouched.
 */
export function widenForHelperRuntime(
  profile: PermissionProfile,
  reads: HelperRuntimeReads,
): PermissionProfile {
  if (!isRestrictedProfile(profile)) return profile;
  const { os } = reads;
  const readEntry = (path: string, access: FileSystemEntry['access']): FileSystemEntry => ({
    path: { type: 'path', path: nativeToPathUri(path, os) },
    access,
  });
  let widened: RestrictedProfile = withEntries(
    profile,
    profile.file_system.entries.flatMap((entry) =>
      entry.path.type === 'special' && entry.path.value.kind === 'minimal'
        ? reads.minimalRootsPresent.map((root) => readEntry(root, entry.access))
        : [entry],
    ),
  );
  const grantRead = (path: string): void => {
    const decision = accessFor(widened, path, os);
    if (decision.access !== 'deny' || decision.entry !== null) return;
    widened = withEntries(widened, [...widened.file_system.entries, readEntry(path, 'read')]);
  };
  if (!hasFullDiskRead(profile)) for (const root of reads.minimalRootsPresent) grantRead(root);
  for (const file of reads.helperFiles) grantRead(file);
  return widened;
}

function withEntries(profile: RestrictedProfile, entries: FileSystemEntry[]): RestrictedProfile {
  return { ...profile, file_system: { ...profile.file_system, entries } };
}
