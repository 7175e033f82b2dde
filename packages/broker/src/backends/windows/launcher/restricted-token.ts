import { randomBytes } from 'node:crypto';
import { TOKEN_FLAG_VALUES, type WindowsLaunchPlan } from '../windows-launch-protocol.js';
import { explicitAccess } from './acl-edits.js';
import { type Out, type Pointer, type Win32Api, win32Failure } from './win32-api.js';

const TOKEN_ASSIGN_PRIMARY = 0x1;
const TOKEN_DUPLICATE = 0x2;
const TOKEN_QUERY = 0x8;
const TOKEN_ADJUST_DEFAULT = 0x80;
const TOKEN_ADJUST_SESSIONID = 0x100;
const TOKEN_GROUPS_CLASS = 2;
const TOKEN_DEFAULT_DACL_CLASS = 6;
const SE_GROUP_LOGON_ID = 0xc0000000;
const GENERIC_ALL = 0x10000000;
const GRANT_ACCESS = 1;

/**
 * A fresh capability SID (S-1-15-3-…, the form Windows derives for capability names) made of random
 * sub-authorities: no other process holds it, so the ACEs granted to it open the writable roots to
 * this one run only. Free it with LocalFree.
 */
export function createCapabilitySid(api: Win32Api): Pointer {
  const random = randomBytes(32);
  const words = Array.from({ length: 8 }, (_, i) => random.readUInt32LE(i * 4));
  const text = `S-1-15-3-1024-${words.join('-')}`;
  const sid: Out<Pointer> = [null];
  if (!api.ConvertStringSidToSidW(text, sid)) throw win32Failure(api, 'ConvertStringSidToSidW');
  return sid[0];
}

/**
 * The helper's primary token: the broker's own token with every privilege but change-notify
 * removed (DISABLE_MAX_PRIVILEGE), administrators filtered (LUA_TOKEN), and WRITE_RESTRICTED with the
 * capability SID (and the logon session SID, which the session's own objects grant) as the only
 * restricting SIDs, so a write succeeds only where an ACE grants one of them.
 */
export function createRestrictedToken(api: Win32Api, plan: WindowsLaunchPlan, capability: Pointer): Pointer {
  const own: Out<Pointer> = [null];
  const access =
    TOKEN_ASSIGN_PRIMARY | TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ADJUST_DEFAULT | TOKEN_ADJUST_SESSIONID;
  if (!api.OpenProcessToken(api.GetCurrentProcess(), access, own))
    throw win32Failure(api, 'OpenProcessToken');
  try {
    return withTokenInformation(api, own[0], TOKEN_GROUPS_CLASS, (groups) => {
      const restricting = [{ Sid: capability, Attributes: 0 }];
      const logon = plan.restrictingSids.includes('logon-session') ? logonSid(api, groups) : null;
      if (logon) restricting.push({ Sid: logon, Attributes: 0 });
      const flags = plan.tokenFlags.reduce((all, name) => all | TOKEN_FLAG_VALUES[name], 0);
      const token: Out<Pointer> = [null];
      if (
        !api.CreateRestrictedToken(own[0], flags, 0, null, 0, null, restricting.length, restricting, token)
      ) {
        throw win32Failure(api, 'CreateRestrictedToken');
      }
      try {
        grantDefaultDacl(api, token[0], capability);
      } catch (error) {
        api.CloseHandle(token[0]);
        throw error;
      }
      return token[0];
    });
  } finally {
    api.CloseHandle(own[0]);
  }
}

/**
 * Objects the helper creates without an inheritable ACL (its own process and thread objects,
 * synchronisation objects) get the token's default DACL; the restricted pass of a write check
 * needs the capability SID there too, or the helper could not use what it created.
 */
function grantDefaultDacl(api: Win32Api, token: Pointer, capability: Pointer): void {
  withTokenInformation(api, token, TOKEN_DEFAULT_DACL_CLASS, (info) => {
    const current = (api.koffi.decode(info, api.types.TOKEN_DEFAULT_DACL) as { DefaultDacl: Pointer })
      .DefaultDacl;
    const merged: Out<Pointer> = [null];
    const status = api.SetEntriesInAclW(
      1,
      [explicitAccess(capability, GRANT_ACCESS, GENERIC_ALL, 0)],
      current,
      merged,
    );
    if (status !== 0) throw win32Failure(api, 'SetEntriesInAclW', status, 'the default DACL');
    try {
      const size = api.koffi.sizeof(api.types.TOKEN_DEFAULT_DACL);
      if (!api.SetTokenInformation(token, TOKEN_DEFAULT_DACL_CLASS, { DefaultDacl: merged[0] }, size)) {
        throw win32Failure(api, 'SetTokenInformation');
      }
    } finally {
      api.LocalFree(merged[0]);
    }
  });
}

/** The logon session SID among the token's groups (a pointer into `groups`), or null. */
function logonSid(api: Win32Api, groups: Pointer): Pointer {
  const { koffi, types } = api;
  const count = koffi.decode(groups, 'uint32_t') as number;
  // TOKEN_GROUPS: a DWORD count, then the array aligned like a pointer.
  const entries = koffi.decode(
    groups,
    koffi.sizeof('void *'),
    koffi.array(types.SID_AND_ATTRIBUTES, count),
  ) as Array<{
    Sid: Pointer;
    Attributes: number;
  }>;
  const logon = entries.find((entry) => (entry.Attributes & SE_GROUP_LOGON_ID) >>> 0 === SE_GROUP_LOGON_ID);
  return logon?.Sid ?? null;
}

/**
 * Calls GetTokenInformation into memory koffi allocates (stable: the structures inside point into
 * it), runs `use` on it, then frees it.
 */
function withTokenInformation<T>(
  api: Win32Api,
  token: Pointer,
  infoClass: number,
  use: (info: Pointer) => T,
): T {
  const needed: Out<number> = [0];
  api.GetTokenInformation(token, infoClass, null, 0, needed);
  if (needed[0] === 0) throw win32Failure(api, 'GetTokenInformation');
  const memory = api.koffi.alloc('uint8_t', needed[0]) as Pointer;
  try {
    if (!api.GetTokenInformation(token, infoClass, memory, needed[0], needed)) {
      throw win32Failure(api, 'GetTokenInformation');
    }
    return use(memory);
  } finally {
    api.koffi.free(memory);
  }
}
