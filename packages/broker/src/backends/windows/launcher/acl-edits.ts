import { lstatSync, realpathSync } from 'node:fs';
import { FsError } from '@fs-sandbox/policy/core';
import { ACCESS_MASKS, type AclEdit } from '../windows-launch-protocol.js';
import { type ExplicitAccess, type Out, type Pointer, type Win32Api, win32Failure } from './win32-api.js';

const SE_FILE_OBJECT = 1;
const DACL_SECURITY_INFORMATION = 0x4;
const GRANT_ACCESS = 1;
const DENY_ACCESS = 3;
const REVOKE_ACCESS = 4;
const NO_INHERITANCE = 0;
const SUB_CONTAINERS_AND_OBJECTS_INHERIT = 0x3;
const TRUSTEE_IS_SID = 0;
const TRUSTEE_IS_UNKNOWN = 0;

/** An EXPLICIT_ACCESS entry naming `sid` directly. */
export function explicitAccess(
  sid: Pointer,
  mode: number,
  mask: number,
  inheritance: number,
): ExplicitAccess {
  return {
    grfAccessPermissions: mask,
    grfAccessMode: mode,
    grfInheritance: inheritance,
    Trustee: {
      pMultipleTrustee: null,
      MultipleTrusteeOperation: 0,
      TrusteeForm: TRUSTEE_IS_SID,
      TrusteeType: TRUSTEE_IS_UNKNOWN,
      ptstrName: sid,
    },
  };
}

/**
 * Adds the plan's ACEs for the capability SID: grants first, then denies (SetEntriesInAcl puts
 * deny ACEs ahead of allows, so a deny on a read-only subpath beats the grant it inherits). Every
 * path touched is pushed to `touched` as soon as its DACL changed, so a failure half-way can still
 * be undone by `revokeAclEdits`.
 */
export function applyAclEdits(
  api: Win32Api,
  sid: Pointer,
  grants: AclEdit[],
  denies: AclEdit[],
  touched: string[],
): void {
  for (const [edits, mode] of [
    [grants, GRANT_ACCESS],
    [denies, DENY_ACCESS],
  ] as const) {
    for (const edit of edits) {
      if (!exists(edit.path)) {
        if (edit.whenMissing === 'skip') continue;
        throw new FsError(
          'sandbox_unavailable',
          `${edit.reason} ${edit.path} does not exist; a restricted token protects existing objects, so a missing one could be created writable`,
        );
      }
      if (mode === DENY_ACCESS) assertNoReparsePoint(edit);
      const inheritance =
        edit.inheritance === 'subtree' ? SUB_CONTAINERS_AND_OBJECTS_INHERIT : NO_INHERITANCE;
      changeDacl(api, edit.path, explicitAccess(sid, mode, ACCESS_MASKS[edit.access], inheritance));
      if (!touched.includes(edit.path)) touched.push(edit.path);
    }
  }
}

/**
 * Removes every ACE of the capability SID from the touched paths (REVOKE_ACCESS drops both allows
 * and denies of that trustee; inherited copies go with the re-propagation). Returns the failures
 * instead of throwing, so one stuck path does not keep the others from being cleaned.
 */
export function revokeAclEdits(api: Win32Api, sid: Pointer, touched: string[]): string[] {
  const failures: string[] = [];
  for (const path of touched) {
    try {
      changeDacl(api, path, explicitAccess(sid, REVOKE_ACCESS, 0, NO_INHERITANCE));
    } catch (error) {
      failures.push(`${path}: ${(error as Error).message}`);
    }
  }
  return failures;
}

/** Read the DACL, merge one entry, write it back (which re-propagates inheritable ACEs below). */
function changeDacl(api: Win32Api, path: string, entry: ExplicitAccess): void {
  const dacl: Out<Pointer> = [null];
  const descriptor: Out<Pointer> = [null];
  let status = api.GetNamedSecurityInfoW(
    path,
    SE_FILE_OBJECT,
    DACL_SECURITY_INFORMATION,
    null,
    null,
    dacl,
    null,
    descriptor,
  );
  if (status !== 0) throw win32Failure(api, 'GetNamedSecurityInfoW', status, path);
  try {
    const merged: Out<Pointer> = [null];
    status = api.SetEntriesInAclW(1, [entry], dacl[0], merged);
    if (status !== 0) throw win32Failure(api, 'SetEntriesInAclW', status, path);
    try {
      status = api.SetNamedSecurityInfoW(
        path,
        SE_FILE_OBJECT,
        DACL_SECURITY_INFORMATION,
        null,
        null,
        merged[0],
        null,
      );
      if (status !== 0) throw win32Failure(api, 'SetNamedSecurityInfoW', status, path);
    } finally {
      api.LocalFree(merged[0]);
    }
  } finally {
    api.LocalFree(descriptor[0]);
  }
}

function exists(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}

/**
 * A deny ACE lands on the object a path resolves to. Through a junction or symlink inside a
 * writable root, the sandboxed helper could re-point the link after the ACE is set and the path
 * would name an unprotected object, so such a path is refused.
 */
function assertNoReparsePoint(edit: AclEdit): void {
  const real = realpathSync.native(edit.path);
  if (real.toLowerCase() !== edit.path.toLowerCase()) {
    throw new FsError(
      'sandbox_unavailable',
      `${edit.reason} ${edit.path} resolves through a junction or symlink to ${real}; the sandboxed helper could re-point it, so the sandbox refuses to build`,
    );
  }
}
