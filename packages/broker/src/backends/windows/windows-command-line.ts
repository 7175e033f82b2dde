/**
 * The two strings CreateProcessW takes instead of an argv array and an env object. Pure, so the
 * quoting rules are tested on every OS.
 */

/**
 * Quotes one argument so that the C runtime's parser (CommandLineToArgvW rules) gives it back
 * unchanged: backslashes are literal except before a quote, where they are doubled.
 */
export function quoteWindowsArg(arg: string): string {
  if (arg !== '' && !/[\s"]/.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const char of arg) {
    if (char === '\\') {
      backslashes += 1;
      continue;
    }
    if (char === '"') out += `${'\\'.repeat(backslashes * 2 + 1)}"`;
    else out += `${'\\'.repeat(backslashes)}${char}`;
    backslashes = 0;
  }
  return `${out}${'\\'.repeat(backslashes * 2)}"`;
}

export function windowsCommandLine(argv: string[]): string {
  return argv.map(quoteWindowsArg).join(' ');
}

/**
 * A Unicode environment block: `NAME=value` entries, each NUL-terminated, sorted by name without
 * regard to case as Windows expects, and a final NUL. A name holding `=` or NUL, or a value holding
 * NUL, would split into other variables, so it is refused.
 */
export function windowsEnvironmentBlock(env: Record<string, string>): string {
  const names = Object.keys(env).sort((a, b) => {
    const x = a.toUpperCase();
    const y = b.toUpperCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
  let block = '';
  for (const name of names) {
    const value = env[name] as string;
    if (name === '' || name.includes('=') || name.includes('\0') || value.includes('\0')) {
      throw new TypeError(
        `environment variable ${JSON.stringify(name)} cannot be passed to a Windows process`,
      );
    }
    block += `${name}=${value}\0`;
  }
  return `${block}\0`;
}

/**
 * Variables Windows itself needs in every process, whatever the allowlist says: Winsock fails to
 * initialise without SYSTEMROOT (node aborts at start-up), and libuv adds SYSTEMROOT, SYSTEMDRIVE
 * and TEMP to every child it spawns with a custom environment for that reason. The launcher got
 * them that way and passes the same three on; none of them is user data.
 */
const WINDOWS_RUNTIME_VARIABLES = ['SYSTEMROOT', 'SYSTEMDRIVE', 'TEMP'] as const;

export function withWindowsRuntimeVariables(
  env: Record<string, string>,
  launcherEnv: Record<string, string | undefined>,
): Record<string, string> {
  const out = { ...env };
  const present = new Set(Object.keys(env).map((name) => name.toUpperCase()));
  for (const wanted of WINDOWS_RUNTIME_VARIABLES) {
    if (present.has(wanted)) continue;
    const name = Object.keys(launcherEnv).find((candidate) => candidate.toUpperCase() === wanted);
    const value = name === undefined ? undefined : launcherEnv[name];
    if (name !== undefined && value !== undefined) out[name] = value;
  }
  return out;
}
