import { filterHelperEnv, type HostOs, type ParsedParams } from '@fs-sandbox/policy';

type EnvPolicy = NonNullable<ParsedParams<'process/start'>['envPolicy']>;

/** The reference's default excludes: names that look like credentials never reach a command. */
const DEFAULT_EXCLUDES = ['*KEY*', '*SECRET*', '*TOKEN*'];

/**
 * A command's environment, in the reference's order: what it inherits, minus the default and the
 * policy's excludes, plus `set`, narrowed to `includeOnly`, then the request's own `env` on top.
 * Without a policy the command gets exactly `env`, as the reference gives it. What it inherits is
 * never the broker's whole environment: `all` and `core` both mean the allowlist (env-allowlist.ts),
 * since the broker's variables may hold its own keys and loader settings.
 */
export function commandEnv(
  brokerEnv: Record<string, string | undefined>,
  policy: EnvPolicy | null | undefined,
  env: Record<string, string>,
  os: HostOs,
  /** Names inherited beyond the allowlist (the CA bundle variables, for a command with a network). */
  alsoInherited: readonly string[] = [],
): Record<string, string> {
  if (policy === null || policy === undefined) return { ...env };
  let vars: Record<string, string> =
    policy.inherit === 'none' ? {} : filterHelperEnv(brokerEnv, os, alsoInherited);
  const excludes = [...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES), ...policy.exclude];
  vars = pick(vars, (name) => !excludes.some((pattern) => matchesName(pattern, name)));
  vars = { ...vars, ...policy.set };
  if (policy.includeOnly.length > 0)
    vars = pick(vars, (name) => policy.includeOnly.some((pattern) => matchesName(pattern, name)));
  return { ...vars, ...env };
}

function pick(vars: Record<string, string>, keep: (name: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(vars).filter(([name]) => keep(name)));
}

/** A wildcard pattern (`*`, `?`) against a variable name, case-insensitively, as the reference matches. */
export function matchesName(pattern: string, name: string): boolean {
  const source = [...pattern]
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 'i').test(name);
}
