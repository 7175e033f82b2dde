import { isRestrictedProfile, type PermissionProfile } from '../schemas/sandbox-context.js';
import { isAbsoluteGlob } from './glob-match.js';

/** True when the profile means something different depending on cwd: `project_roots` or a relative glob. */
export function hasCwdDependentPermissions(profile: PermissionProfile): boolean {
  if (!isRestrictedProfile(profile)) return false;
  return profile.file_system.entries.some(
    ({ path }) =>
      (path.type === 'special' && path.value.kind === 'project_roots') ||
      (path.type === 'glob_pattern' && !isAbsoluteGlob(path.pattern)),
  );
}
