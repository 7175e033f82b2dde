import { FsError } from '@fs-sandbox/policy/core';
import type Koffi from 'koffi';
import { defineWin32Types, type Win32Types } from './win32-types.js';

/** What koffi accepts as a type: a C type name, a type object or a direction marker. */
type TypeSpec = Parameters<typeof Koffi.out>[0];

/** A native pointer or handle as koffi returns it (NULL may come back as null or 0n). */
export type Pointer = bigint | null;
/** One-element arrays receive out-parameters. */
export type Out<T> = [T];

/** The Win32 functions the launcher calls, typed as the launcher uses them. */
export interface Win32Api {
  koffi: typeof Koffi;
  types: Win32Types;
  GetCurrentProcess(): Pointer;
  CloseHandle(handle: Pointer): number;
  GetLastError(): number;
  LocalFree(memory: Pointer): Pointer;
  GetStdHandle(which: number): Pointer;
  SetHandleInformation(handle: Pointer, mask: number, flags: number): number;
  CreateJobObjectW(attributes: null, name: null): Pointer;
  SetInformationJobObject(job: Pointer, infoClass: number, info: object, length: number): number;
  AssignProcessToJobObject(job: Pointer, process: Pointer): number;
  ResumeThread(thread: Pointer): number;
  TerminateProcess(process: Pointer, exitCode: number): number;
  WaitForSingleObject(handle: Pointer, milliseconds: number): number;
  GetExitCodeProcess(process: Pointer, code: Out<number>): number;
  CreateMutexW(attributes: null, initialOwner: number, name: string): Pointer;
  ReleaseMutex(mutex: Pointer): number;
  OpenProcessToken(process: Pointer, access: number, token: Out<Pointer>): number;
  CreateRestrictedToken(
    existing: Pointer,
    flags: number,
    disableSidCount: number,
    sidsToDisable: null,
    deletePrivilegeCount: number,
    privilegesToDelete: null,
    restrictedSidCount: number,
    sidsToRestrict: Array<{ Sid: Pointer; Attributes: number }>,
    newToken: Out<Pointer>,
  ): number;
  GetTokenInformation(
    token: Pointer,
    infoClass: number,
    info: Pointer,
    length: number,
    returned: Out<number>,
  ): number;
  SetTokenInformation(
    token: Pointer,
    infoClass: number,
    info: { DefaultDacl: Pointer },
    length: number,
  ): number;
  ConvertStringSidToSidW(sid: string, out: Out<Pointer>): number;
  GetNamedSecurityInfoW(
    name: string,
    objectType: number,
    info: number,
    owner: null,
    group: null,
    dacl: Out<Pointer>,
    sacl: null,
    descriptor: Out<Pointer>,
  ): number;
  SetNamedSecurityInfoW(
    name: string,
    objectType: number,
    info: number,
    owner: null,
    group: null,
    dacl: Pointer,
    sacl: null,
  ): number;
  SetEntriesInAclW(count: number, entries: ExplicitAccess[], oldAcl: Pointer, newAcl: Out<Pointer>): number;
  CreateProcessAsUserW(
    token: Pointer,
    applicationName: string,
    commandLine: Uint8Array,
    processAttributes: null,
    threadAttributes: null,
    inheritHandles: number,
    creationFlags: number,
    environment: Uint8Array,
    currentDirectory: string | null,
    startupInfo: object,
    processInformation: Partial<ProcessInformation>,
  ): number;
}

export interface ExplicitAccess {
  grfAccessPermissions: number;
  grfAccessMode: number;
  grfInheritance: number;
  Trustee: {
    pMultipleTrustee: null;
    MultipleTrusteeOperation: number;
    TrusteeForm: number;
    TrusteeType: number;
    ptstrName: Pointer;
  };
}

export interface ProcessInformation {
  hProcess: Pointer;
  hThread: Pointer;
  dwProcessId: number;
  dwThreadId: number;
}

/**
 * Loads koffi and binds the Win32 functions. koffi is imported here, lazily, and only on Windows:
 * it is an optional native dependency that the rest of the broker never loads.
 */
export async function loadWin32Api(): Promise<Win32Api> {
  if (process.platform !== 'win32') {
    throw new FsError(
      'sandbox_unavailable',
      `the restricted-token launcher runs only on Windows, not ${process.platform}`,
    );
  }
  let koffi: typeof Koffi;
  try {
    koffi = (await import('koffi')).default;
  } catch (error) {
    throw new FsError(
      'sandbox_unavailable',
      `the restricted-token sandbox needs the optional dependency koffi, which cannot be loaded: ${(error as Error).message}`,
    );
  }
  const types = defineWin32Types(koffi);
  const kernel32 = koffi.load('kernel32.dll');
  const advapi32 = koffi.load('advapi32.dll');
  const out = (type: TypeSpec) => koffi.out(koffi.pointer(type));
  const k = (name: string, result: TypeSpec, args: TypeSpec[]) =>
    kernel32.func('__stdcall', name, result, args);
  const a = (name: string, result: TypeSpec, args: TypeSpec[]) =>
    advapi32.func('__stdcall', name, result, args);
  const ptr = 'void *';
  return {
    koffi,
    types,
    GetCurrentProcess: k('GetCurrentProcess', ptr, []),
    CloseHandle: k('CloseHandle', 'int32_t', [ptr]),
    GetLastError: k('GetLastError', 'uint32_t', []),
    LocalFree: k('LocalFree', ptr, [ptr]),
    GetStdHandle: k('GetStdHandle', ptr, ['uint32_t']),
    SetHandleInformation: k('SetHandleInformation', 'int32_t', [ptr, 'uint32_t', 'uint32_t']),
    CreateJobObjectW: k('CreateJobObjectW', ptr, [ptr, ptr]),
    SetInformationJobObject: k('SetInformationJobObject', 'int32_t', [
      ptr,
      'int32_t',
      koffi.pointer(types.JOBOBJECT_EXTENDED_LIMIT_INFORMATION),
      'uint32_t',
    ]),
    AssignProcessToJobObject: k('AssignProcessToJobObject', 'int32_t', [ptr, ptr]),
    ResumeThread: k('ResumeThread', 'uint32_t', [ptr]),
    TerminateProcess: k('TerminateProcess', 'int32_t', [ptr, 'uint32_t']),
    WaitForSingleObject: k('WaitForSingleObject', 'uint32_t', [ptr, 'uint32_t']),
    GetExitCodeProcess: k('GetExitCodeProcess', 'int32_t', [ptr, out('uint32_t')]),
    CreateMutexW: k('CreateMutexW', ptr, [ptr, 'int32_t', 'str16']),
    ReleaseMutex: k('ReleaseMutex', 'int32_t', [ptr]),
    OpenProcessToken: a('OpenProcessToken', 'int32_t', [ptr, 'uint32_t', out(ptr)]),
    CreateRestrictedToken: a('CreateRestrictedToken', 'int32_t', [
      ptr,
      'uint32_t',
      'uint32_t',
      ptr,
      'uint32_t',
      ptr,
      'uint32_t',
      koffi.pointer(types.SID_AND_ATTRIBUTES),
      out(ptr),
    ]),
    GetTokenInformation: a('GetTokenInformation', 'int32_t', [
      ptr,
      'int32_t',
      ptr,
      'uint32_t',
      out('uint32_t'),
    ]),
    SetTokenInformation: a('SetTokenInformation', 'int32_t', [
      ptr,
      'int32_t',
      koffi.pointer(types.TOKEN_DEFAULT_DACL),
      'uint32_t',
    ]),
    ConvertStringSidToSidW: a('ConvertStringSidToSidW', 'int32_t', ['str16', out(ptr)]),
    GetNamedSecurityInfoW: a('GetNamedSecurityInfoW', 'uint32_t', [
      'str16',
      'int32_t',
      'uint32_t',
      ptr,
      ptr,
      out(ptr),
      ptr,
      out(ptr),
    ]),
    SetNamedSecurityInfoW: a('SetNamedSecurityInfoW', 'uint32_t', [
      'str16',
      'int32_t',
      'uint32_t',
      ptr,
      ptr,
      ptr,
      ptr,
    ]),
    SetEntriesInAclW: a('SetEntriesInAclW', 'uint32_t', [
      'uint32_t',
      koffi.pointer(types.EXPLICIT_ACCESS_W),
      ptr,
      out(ptr),
    ]),
    CreateProcessAsUserW: a('CreateProcessAsUserW', 'int32_t', [
      ptr,
      'str16',
      ptr,
      ptr,
      ptr,
      'int32_t',
      'uint32_t',
      ptr,
      'str16',
      koffi.pointer(types.STARTUPINFOW),
      out(types.PROCESS_INFORMATION),
    ]),
  };
}

/** A Win32 failure before the helper started: the sandbox could not be built. */
export function win32Failure(
  api: Win32Api,
  call: string,
  code: number = api.GetLastError(),
  subject = '',
): FsError {
  const about = subject === '' ? '' : ` for ${subject}`;
  return new FsError('sandbox_unavailable', `${call} failed${about} (Win32 error ${code})`);
}
