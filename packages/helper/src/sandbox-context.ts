import { isPlainObject } from './params.js';

/**
 * Whether `params.sandbox` asks for a restricted context. Only contexts that clearly need no
 * platform sandbox count as unrestricted: absent/null, a `disabled` or `external` profile, or a
 * managed profile with `unrestricted` file-system access. Anything else (including a shape the
 * helper does not understand) counts as restricted, so an unexpected context never loosens the
 * helper's own rules (fail closed).
 */
export function isRestrictedContext(sandbox: unknown): boolean {
  if (sandbox === undefined || sandbox === null) return false;
  if (!isPlainObject(sandbox) || !isPlainObject(sandbox.permissions)) return true;
  const { type } = sandbox.permissions;
  if (type === 'disabled' || type === 'external') return false;
  const fileSystem = sandbox.permissions.file_system;
  return !(type === 'managed' && isPlainObject(fileSystem) && fileSystem.type === 'unrestricted');
}
