import { FsError } from '@fs-sandbox/policy';

/**
 * Windows names one file in many ways that a lexical policy check cannot see through: 8.3 short
 * names (`PROGRA~1`), names with trailing dots or spaces (stripped by the Win32 layer, so `.git.`
 * is `.git`), alternate data streams (`file::$DATA`, `dir:stream`), reserved device names (`NUL`,
 * `COM1.txt`) and the `\\?\`, `\\.\` and UNC namespaces. A rule written for `C:\w\.git` would not
 * match `C:\w\GIT~1`, so any path spelled in one of these forms is refused outright instead of
 * being compared with the policy.
 */

const DRIVE_ABSOLUTE = /^[A-Za-z]:[\\/]/;
// The superscript digits ¹²³ (Win32 reserves COM¹ too) as escapes: one character outside ASCII
// would make the bundles that include this (the CLI's 1 MB) load as two-byte strings.
const RESERVED_DEVICE =
  /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])$/i;
const SHORT_NAME = /^[^.~]{1,6}~[0-9]{1,6}(\.[^.]{0,3})?$/;
const INVALID_CHARACTER = /[<>"|?*]/;

/** Why `path` is an alias form Windows could resolve to a protected or denied file, or null when it is plain. */
export function windowsPathAliasProblem(path: string): string | null {
  if (/^[\\/]{2}[?.][\\/]/.test(path) || path.startsWith('\\??\\')) {
    return 'device and verbatim namespace paths (\\\\?\\, \\\\.\\) bypass Win32 path rules';
  }
  if (/^[\\/]{2}/.test(path)) return 'UNC paths are not accepted';
  if (!DRIVE_ABSOLUTE.test(path)) return 'not an absolute drive path';
  const rest = path.slice(3);
  if (rest.includes(':')) return 'alternate data streams (a colon after the drive) are not accepted';
  for (const component of rest.split(/[\\/]/)) {
    if (component === '') continue;
    const problem = componentProblem(component);
    if (problem !== null) return `component ${JSON.stringify(component)}: ${problem}`;
  }
  return null;
}

function componentProblem(component: string): string | null {
  if (component === '.' || component === '..') return 'relative components are not accepted';
  if (INVALID_CHARACTER.test(component) || [...component].some((char) => char.charCodeAt(0) < 0x20))
    return 'characters Windows does not allow in names';
  if (/[. ]$/.test(component)) return 'trailing dots and spaces are stripped by Windows, naming another file';
  // The device check looks at the name before its first dot, with trailing spaces removed:
  // `nul.txt` and `NUL .log` open the device too.
  const stem = (component.split('.')[0] as string).replace(/ +$/, '');
  if (RESERVED_DEVICE.test(stem)) return 'reserved device names open a device, not a file';
  if (SHORT_NAME.test(component)) return 'looks like an 8.3 short name, which can alias any long name';
  return null;
}

/**
 * Refuses a request path spelled as a Windows alias (`permission_denied`, the rule in the message).
 * The router calls this for every path of a sandboxed request on Windows, before any policy check.
 */
export function assertPlainWindowsPath(path: string): void {
  const problem = windowsPathAliasProblem(path);
  if (problem !== null) {
    throw new FsError('permission_denied', `refused Windows path alias ${JSON.stringify(path)}: ${problem}`);
  }
}

/** Refuses a sandbox plan that names a path in an alias form: the backend could not protect what it means. */
export function assertPlainWindowsPlanPath(path: string, role: string): void {
  const problem = windowsPathAliasProblem(path);
  if (problem !== null) {
    throw new FsError(
      'sandbox_unavailable',
      `the restricted-token sandbox cannot use ${role} ${JSON.stringify(path)}: ${problem}`,
    );
  }
}
