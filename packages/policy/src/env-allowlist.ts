import type { HostOs } from './host-os.js';

/**
 * The only variables that reach the helper. The broker's environment may hold API
 * keys, proxy settings and hostile loader variables (`NODE_OPTIONS`, `LD_PRELOAD`, `BASH_ENV`), so
 * this is an allowlist of exact names, never a denylist or a prefix match (`PATH_INJECTION` is not
 * `PATH`).
 */
const BASE_NAMES = ['PATH', 'TMPDIR', 'TMP', 'TEMP'] as const;
const MACOS_NAMES = ['__CF_USER_TEXT_ENCODING'] as const;

function allowedNames(os: HostOs): readonly string[] {
  return os === 'macos' ? [...BASE_NAMES, ...MACOS_NAMES] : BASE_NAMES;
}

export function filterHelperEnv(env: Record<string, string | undefined>, os: HostOs): Record<string, string> {
  const allowed = allowedNames(os);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.includes('\0')) continue;
    // Windows variable names are case-insensitive (`Path` is PATH); elsewhere case matters.
    const key = os === 'windows' ? name.toUpperCase() : name;
    if (allowed.includes(key)) out[name] = value;
  }
  return out;
}
