/**
 * macOS spells three top-level directories as symlinks into `/private`. Seatbelt matches the path
 * the kernel resolved, so a rule for `/tmp/x` would never match; every path the profile names is
 * rewritten to its `/private` form. Only these top-level aliases are resolved: a symlink deeper in
 * a path is a decision of whoever controls that directory, and the backend refuses it instead.
 */
const TOP_LEVEL_ALIASES = ['/tmp', '/var', '/etc'] as const;

export function resolveMacosTopLevelAlias(path: string): string {
  for (const alias of TOP_LEVEL_ALIASES) {
    if (path === alias || path.startsWith(`${alias}/`)) return `/private${path}`;
  }
  return path;
}

/** The alias symlinks themselves: the helper lstat()s them when it resolves a path spelled with them. */
export const MACOS_ALIAS_LINKS: readonly string[] = TOP_LEVEL_ALIASES;
