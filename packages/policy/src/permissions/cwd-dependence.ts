import {
  isRestrictedProfile,
  type PermissionProfile,
  type SandboxContext,
} from '../schemas/sandbox-context.js';
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

/**
 * The context without `cwd` when nothing in it depends on cwd, so contexts that differ only in an
 * unused cwd share one sandbox shape (and one warm-pool key).
 */
export function dropCwdIfUnused<T extends SandboxContext | null | undefined>(context: T): T {
  if (!context || !('cwd' in context) || hasCwdDependentPermissions(context.permissions)) return context;
  const { cwd: _unused, ...rest } = context;
  return rest as T;
}
