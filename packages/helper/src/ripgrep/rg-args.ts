import type { HelperParamsOf } from '@fs-sandbox/policy';

/**
 * The argv ripgrep runs with (never through a shell): one fixed prefix, then the request's choices
 * as separate arguments, the pattern after `-e` and the root after `--`, so no value a request
 * carries can be read as a flag.
 */

export type SearchOptions = Omit<HelperParamsOf<'fs/search'>, 'maxResults'>;
export type GlobOptions = Omit<HelperParamsOf<'fs/glob'>, 'maxResults'>;

/**
 * Threads ripgrep searches with. Measured with `pnpm bench:search` (20 000 files, 2 CPUs, loaded
 * machine): 2 threads 1.04 s median, 1 thread 1.32 s, 4 threads 1.11 s.
 */
export const RIPGREP_THREADS = 2;

/**
 * Always passed: no config file (a RIPGREP_CONFIG_PATH or `~/.ripgreprc` could add any flag), the
 * default regex engine only (no PCRE2: no backtracking blow-up), no symlink following (a link to
 * outside the policy must not widen what is searched, though the kernel would stop it), no fatal
 * file errors (masked paths are unreadable by design), ignore files honoured whether or not the
 * repository's `.git` is visible in the sandbox, and no global git excludes (a file in the user's
 * home the sandbox may not even show).
 */
export const RIPGREP_FIXED_ARGS: readonly string[] = [
  '--no-config',
  '--no-pcre2',
  '--no-follow',
  '--no-messages',
  '--no-require-git',
  '--no-ignore-global',
];

function walkArgs(options: { includeHidden: boolean; includeIgnored: boolean }): string[] {
  const args = ['--threads', String(RIPGREP_THREADS)];
  if (options.includeHidden) args.push('--hidden');
  if (options.includeIgnored) args.push('--no-ignore');
  return args;
}

/** `-g` arguments: the request's globs first, the policy's excludes last (a later glob wins in ripgrep). */
function globArgs(includes: readonly string[], excludes: readonly string[]): string[] {
  const args: string[] = [];
  for (const glob of includes) args.push('-g', glob);
  for (const glob of excludes) args.push('-g', `!${glob}`);
  return args;
}

/** fs/search: JSON output (one event per line); `filesOnly` stops at each file's first match. */
export function searchArgv(options: SearchOptions, policyExcludes: readonly string[]): string[] {
  const args = [...RIPGREP_FIXED_ARGS, '--json', ...walkArgs(options)];
  args.push(options.caseSensitive ? '--case-sensitive' : '--ignore-case');
  if (options.fixedStrings) args.push('--fixed-strings');
  if (options.filesOnly) args.push('--max-count', '1');
  else if (options.contextLines > 0) args.push('--context', String(options.contextLines));
  args.push(...globArgs(options.include, [...options.exclude, ...policyExcludes]));
  args.push('-e', options.pattern, '--', options.path);
  return args;
}

/** fs/glob: file names only, NUL-separated (exact bytes, any name). */
export function globArgv(options: GlobOptions, policyExcludes: readonly string[]): string[] {
  const args = [...RIPGREP_FIXED_ARGS, '--files', '--null', ...walkArgs(options)];
  args.push(...globArgs(options.patterns, policyExcludes));
  args.push('--', options.path);
  return args;
}
