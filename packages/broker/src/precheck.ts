import {
  checkAccess,
  FsError,
  type HelperOperation,
  type HostOs,
  isRestrictedProfile,
  joinPath,
  type PermissionProfile,
  PROTECTED_METADATA_NAMES,
  pathStartsWith,
  pathUriToNative,
} from '@fs-sandbox/policy';
import { assertPlainWindowsPath } from './backends/windows/windows-path-guard.js';

/**
 * Clear denials before any spawn. The kernel sandbox is the enforcement; this check only turns the
 * obvious refusals into errors that name the rule ("outside writable roots", "denied by entry …",
 * "protected metadata path .git") instead of a bare EROFS/ENOENT from inside the sandbox. It is
 * also what refuses writes to a missing deny path or a missing `.git` under a writable root, which
 * the bwrap backend cannot mask without creating a placeholder on the host.
 */

type Want = 'read' | 'write';

/** The paths an operation touches and how (URI-valued params, by field name). */
const ACCESS_BY_OPERATION: Record<HelperOperation, ReadonlyArray<readonly [field: string, want: Want]>> = {
  'fs/readFile': [['path', 'read']],
  'fs/writeFile': [['path', 'write']],
  'fs/createDirectory': [['path', 'write']],
  'fs/getMetadata': [['path', 'read']],
  'fs/canonicalize': [['path', 'read']],
  'fs/readDirectory': [['path', 'read']],
  'fs/remove': [['path', 'write']],
  'fs/copy': [
    ['sourcePath', 'read'],
    ['destinationPath', 'write'],
  ],
  'fs/walk': [['path', 'read']],
  'fs/openForRead': [['path', 'read']],
  'fs/readRange': [['path', 'read']],
};

/** Throws `permission_denied` / `protected_path` naming the rule when the profile refuses a path of the request. */
export function precheckRequest(
  operation: HelperOperation,
  params: Record<string, unknown>,
  profile: PermissionProfile,
  os: HostOs,
): void {
  for (const [field, want] of ACCESS_BY_OPERATION[operation]) {
    const uri = params[field];
    if (typeof uri !== 'string') continue;
    const path = pathUriToNative(uri, os);
    // `C:\w\GIT~1\config` or `C:\w\.git.\config` names .git without matching any rule about it.
    if (os === 'windows') assertPlainWindowsPath(path);
    const decision = checkAccess(profile, path, want, os);
    if (!decision.allowed) throw new FsError(decision.kind, `cannot ${want} ${path}: ${decision.rule}`);
  }
  if (operation === 'fs/copy' && params.recursive === true && typeof params.destinationPath === 'string') {
    refuseNarrowedInside(pathUriToNative(params.destinationPath, os), profile, os);
  }
}

/**
 * A recursive copy creates a whole tree below its destination, and only the destination itself is
 * checked above. A missing deny path, read-only entry or `.git` of a writable root inside that tree
 * has no mask in the sandbox (nothing is mounted over a missing path), so the copy would create
 * it; this check is what refuses it. (A deny glob cannot be enumerated this way; existing matches
 * in the source are masked and therefore skipped by the copy.)
 */
function refuseNarrowedInside(destination: string, profile: PermissionProfile, os: HostOs): void {
  if (!isRestrictedProfile(profile)) return;
  for (const entry of profile.file_system.entries) {
    if (entry.path.type !== 'path') continue;
    const root = pathUriToNative(entry.path.path, os);
    const candidates = [root, ...PROTECTED_METADATA_NAMES.map((name) => joinPath(os, root, name))];
    for (const path of candidates) {
      if (path === destination || !pathStartsWith(os, path, destination)) continue;
      const decision = checkAccess(profile, path, 'write', os);
      if (!decision.allowed) {
        throw new FsError(
          decision.kind,
          `cannot write ${path}: ${decision.rule} (fs/copy would create it inside ${destination})`,
        );
      }
    }
  }
}
