import type { HostOs } from './host-os.js';
import { pathStartsWith } from './native-path.js';
import { nativeToPathUri } from './path-uri.js';
import { accessFor, secretsCarvedFrom } from './permissions/access.js';
import { hasFullDiskRead } from './permissions/full-disk.js';
import { rootOnlySecrets, runtimeReadRootCandidates } from './platform-roots.js';
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
 * What every sandbox lets its program read whatever the policy grants, in the order they are
 * granted: the runtime roots that exist (the minimal set without its configuration, see
 * platform-roots.ts) unless the policy reads the whole disk anyway, then the exact helper files —
 * the files, not their folders, which may hold anything (credentials next to a bundle). The one
 * list both the widening below (what the sandbox mounts) and runtimeReadOf (what explainAccess,
 * `why` and the pre-check report) are made from.
 */
export function runtimeReadPaths(profile: PermissionProfile, reads: HelperRuntimeReads): string[] {
  const runtimeRoots = runtimeReadRootCandidates(reads.os);
  const roots = hasFullDiskRead(profile)
    ? []
    : reads.minimalRootsPresent.filter((root) => runtimeRoots.includes(root));
  return [...roots, ...reads.helperFiles];
}

/**
 * The runtime read (a root or a helper file of runtimeReadPaths) that makes `path` readable in the
 * sandbox although the policy grants it nothing, or null: where an entry of the policy decides the
 * path (a deny included), that entry stands, as it does in the widening.
 */
export function runtimeReadOf(
  profile: PermissionProfile,
  path: string,
  reads: HelperRuntimeReads,
): string | null {
  if (!isRestrictedProfile(profile)) return null;
  const decision = accessFor(profile, path, reads.os);
  if (decision.access !== 'deny' || decision.entry !== null) return null;
  return runtimeReadPaths(profile, reads).find((granted) => pathStartsWith(reads.os, path, granted)) ?? null;
}

/**
 * The profile plus what the helper process itself needs to start (runtimeReadPaths). `minimal`
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
    profile.file_system.entries.flatMap((entry) => {
      // What `minimal` and a whole-disk read do not grant (access.ts secretsCarvedFrom), masked
      // like any deny.
      const carved = secretsCarvedFrom(entry);
      const grants =
        carved === 'minimal'
          ? reads.minimalRootsPresent.map((root) => readEntry(root, entry.access))
          : [entry];
      if (carved === null) return grants;
      const secrets = rootOnlySecrets(os).filter(
        (secret) =>
          carved === 'root' ||
          reads.minimalRootsPresent.some((root) => pathStartsWith(os, secret.path, root)),
      );
      return [...grants, ...secrets.map((secret) => readEntry(secret.path, 'deny'))];
    }),
  );
  for (const path of runtimeReadPaths(profile, reads)) {
    const decision = accessFor(widened, path, os);
    if (decision.access !== 'deny' || decision.entry !== null) continue;
    widened = withEntries(widened, [...widened.file_system.entries, readEntry(path, 'read')]);
  }
  return widened;
}

function withEntries(profile: RestrictedProfile, entries: FileSystemEntry[]): RestrictedProfile {
  return { ...profile, file_system: { ...profile.file_system, entries } };
}
