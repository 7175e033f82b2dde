import { FsError } from '@fs-sandbox/policy/core';

/**
 * The contract between the broker (which builds a plan) and the Windows launcher (which carries it
 * out): `node windows-launcher.js <plan JSON> <node> [node flags] <helper bundle> [helper args]`.
 * The helper's command line follows the plan as plain arguments, like bwrap's after `--`, so the
 * broker builds it the same way for every backend. Kept apart from both sides' logic, and free of
 * zod, because the launcher runs on every sandboxed Windows operation.
 */

/** The Windows levels that run under a write-restricted token. */
export type RestrictedTokenLevel = 'restricted-token' | 'elevated';

/** CreateRestrictedToken flags (winnt.h). */
export const TOKEN_FLAG_VALUES = {
  DISABLE_MAX_PRIVILEGE: 0x1,
  LUA_TOKEN: 0x4,
  WRITE_RESTRICTED: 0x8,
} as const;
export type TokenFlag = keyof typeof TOKEN_FLAG_VALUES;

/** File access masks the launcher puts in ACEs for the per-run capability SID. */
export const ACCESS_MASKS = {
  /** FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE ("Modify"). */
  modify: 0x1301bf,
  /**
   * Every right that changes a file or directory: write/append data, write EA and attributes,
   * delete child, DELETE, WRITE_DAC, WRITE_OWNER. READ_CONTROL and SYNCHRONIZE stay allowed, so
   * reading is unaffected.
   */
  write: 0xd0156,
  /** DELETE alone: the object can no longer be removed or renamed. */
  delete: 0x10000,
} as const;
export type AccessName = keyof typeof ACCESS_MASKS;

/** One ACE the launcher adds for the per-run capability SID, and removes again after the run. */
export interface AclEdit {
  path: string;
  access: AccessName;
  /** `subtree`: inherited by everything below (object and container inherit); `none`: this object only. */
  inheritance: 'subtree' | 'none';
  /** An ACE protects an existing object; when the object is missing the launcher refuses or skips. */
  whenMissing: 'refuse' | 'skip';
  reason: string;
}

/** The symbolic restricting SIDs; the launcher turns them into real SIDs at run time. */
export type RestrictingSid = 'per-run-capability' | 'logon-session';

/**
 * Everything the Windows launcher needs besides the helper's command line, passed to it as one JSON
 * argument. The capability SID is created by the launcher for each run, so this plan stays
 * deterministic.
 */
export interface WindowsLaunchPlan {
  version: 1;
  level: RestrictedTokenLevel;
  tokenFlags: TokenFlag[];
  restrictingSids: RestrictingSid[];
  grants: AclEdit[];
  denies: AclEdit[];
  env: Record<string, string>;
  cwd: string | null;
  /** The helper's job: killed with the launcher, and it may not start other processes. */
  job: { killOnClose: true; activeProcessLimit: 1 | 2 };
}

/** CreateProcessW takes at most 32 767 UTF-16 units of command line, the terminating NUL included. */
export const MAX_COMMAND_LINE_CHARS = 32_766;

const ACCESS_NAMES = Object.keys(ACCESS_MASKS);
const TOKEN_FLAGS = Object.keys(TOKEN_FLAG_VALUES);
const RESTRICTING_SIDS: RestrictingSid[] = ['per-run-capability', 'logon-session'];

/** Parses and checks the launcher's argument; anything unexpected is `sandbox_unavailable` (no partial sandbox). */
export function parseWindowsLaunchPlan(text: string | undefined): WindowsLaunchPlan {
  const fail = (what: string): never => {
    throw new FsError('sandbox_unavailable', `the Windows launcher got a malformed plan: ${what}`);
  };
  if (text === undefined || text.length > MAX_COMMAND_LINE_CHARS)
    return fail('missing or oversized argument');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail('not JSON');
  }
  const plan = raw as WindowsLaunchPlan;
  if (typeof raw !== 'object' || raw === null || plan.version !== 1) fail('unknown version');
  if (plan.level !== 'restricted-token' && plan.level !== 'elevated') fail('unknown level');
  if (!isArrayOf(plan.tokenFlags, (flag) => TOKEN_FLAGS.includes(flag as string))) fail('tokenFlags');
  if (!plan.tokenFlags.includes('WRITE_RESTRICTED')) fail('the token must be write-restricted');
  if (!isArrayOf(plan.restrictingSids, (sid) => RESTRICTING_SIDS.includes(sid as RestrictingSid))) {
    fail('restrictingSids');
  }
  if (!plan.restrictingSids.includes('per-run-capability')) fail('the per-run capability SID is required');
  if (!isArrayOf(plan.grants, isAclEdit) || !isArrayOf(plan.denies, isAclEdit)) fail('ACL edits');
  const env = plan.env as unknown;
  if (typeof env !== 'object' || env === null || !Object.values(env).every(isString)) fail('env');
  if (plan.cwd !== null && !isString(plan.cwd)) fail('cwd');
  if (
    plan.job?.killOnClose !== true ||
    (plan.job.activeProcessLimit !== 1 && plan.job.activeProcessLimit !== 2)
  )
    fail('job limits');
  return plan;
}

/** The helper's command line (the launcher's arguments after the plan): node and the bundle at least. */
export function parseHelperCommand(args: readonly string[]): string[] {
  if (args.length < 2 || args.some((arg) => arg === '')) {
    throw new FsError(
      'sandbox_unavailable',
      'the Windows launcher got no helper command line after the plan (node and the helper bundle)',
    );
  }
  return [...args];
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isArrayOf<T>(value: unknown, check: (item: unknown) => boolean): value is T[] {
  return Array.isArray(value) && value.every(check);
}

function isAclEdit(value: unknown): boolean {
  const edit = value as AclEdit;
  return (
    typeof value === 'object' &&
    value !== null &&
    isString(edit.path) &&
    ACCESS_NAMES.includes(edit.access) &&
    (edit.inheritance === 'subtree' || edit.inheritance === 'none') &&
    (edit.whenMissing === 'refuse' || edit.whenMissing === 'skip') &&
    isString(edit.reason)
  );
}
