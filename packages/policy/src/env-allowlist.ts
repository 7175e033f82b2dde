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

/**
 * Where the host keeps the certificates its TLS clients trust (OpenSSL, node, Python requests,
 * curl, git, pip, npm, yarn, cargo, the AWS SDKs, Deno, Bundler). A command with a network gets the
 * ones the broker has, so HTTPS works in the sandbox as it does on the host (a corporate CA, a test
 * CA); the files they name are made readable there (never a path a request names).
 */
export const CA_BUNDLE_VARIABLES = [
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'PIP_CERT',
  'NPM_CONFIG_CAFILE',
  'npm_config_cafile',
  'YARN_CAFILE',
  'CARGO_HTTP_CAINFO',
  'AWS_CA_BUNDLE',
  'DENO_CERT',
  'BUNDLE_SSL_CA_CERT',
] as const;

/** The allowlisted variables of `env`, plus those of `alsoNames` (exact names too). */
export function filterHelperEnv(
  env: Record<string, string | undefined>,
  os: HostOs,
  alsoNames: readonly string[] = [],
): Record<string, string> {
  const allowed = [...allowedNames(os), ...alsoNames];
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.includes('\0')) continue;
    // Windows variable names are case-insensitive (`Path` is PATH); elsewhere case matters.
    const key = os === 'windows' ? name.toUpperCase() : name;
    if (allowed.includes(key)) out[name] = value;
  }
  return out;
}
