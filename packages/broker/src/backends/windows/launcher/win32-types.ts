import type Koffi from 'koffi';

type KoffiModule = typeof Koffi;

/**
 * The Win32 structures the launcher passes, declared with fixed-width members so their layout is
 * the same whatever the host (`long` is 32 bits on Windows, 64 on Linux). Anonymous on purpose:
 * koffi registers named types per process, and the tests declare these again on Linux to check
 * the x64 sizes.
 */
export function defineWin32Types(koffi: KoffiModule) {
  const SID_AND_ATTRIBUTES = koffi.struct({ Sid: 'void *', Attributes: 'uint32_t' });
  const TRUSTEE_W = koffi.struct({
    pMultipleTrustee: 'void *',
    MultipleTrusteeOperation: 'int32_t',
    TrusteeForm: 'int32_t',
    TrusteeType: 'int32_t',
    ptstrName: 'void *',
  });
  const EXPLICIT_ACCESS_W = koffi.struct({
    grfAccessPermissions: 'uint32_t',
    grfAccessMode: 'int32_t',
    grfInheritance: 'uint32_t',
    Trustee: TRUSTEE_W,
  });
  const TOKEN_DEFAULT_DACL = koffi.struct({ DefaultDacl: 'void *' });
  const STARTUPINFOW = koffi.struct({
    cb: 'uint32_t',
    lpReserved: 'void *',
    lpDesktop: 'void *',
    lpTitle: 'void *',
    dwX: 'uint32_t',
    dwY: 'uint32_t',
    dwXSize: 'uint32_t',
    dwYSize: 'uint32_t',
    dwXCountChars: 'uint32_t',
    dwYCountChars: 'uint32_t',
    dwFillAttribute: 'uint32_t',
    dwFlags: 'uint32_t',
    wShowWindow: 'uint16_t',
    cbReserved2: 'uint16_t',
    lpReserved2: 'void *',
    hStdInput: 'void *',
    hStdOutput: 'void *',
    hStdError: 'void *',
  });
  const PROCESS_INFORMATION = koffi.struct({
    hProcess: 'void *',
    hThread: 'void *',
    dwProcessId: 'uint32_t',
    dwThreadId: 'uint32_t',
  });
  const JOBOBJECT_BASIC_LIMIT_INFORMATION = koffi.struct({
    PerProcessUserTimeLimit: 'int64_t',
    PerJobUserTimeLimit: 'int64_t',
    LimitFlags: 'uint32_t',
    MinimumWorkingSetSize: 'size_t',
    MaximumWorkingSetSize: 'size_t',
    ActiveProcessLimit: 'uint32_t',
    Affinity: 'uintptr_t',
    PriorityClass: 'uint32_t',
    SchedulingClass: 'uint32_t',
  });
  const IO_COUNTERS = koffi.struct({
    ReadOperationCount: 'uint64_t',
    WriteOperationCount: 'uint64_t',
    OtherOperationCount: 'uint64_t',
    ReadTransferCount: 'uint64_t',
    WriteTransferCount: 'uint64_t',
    OtherTransferCount: 'uint64_t',
  });
  const JOBOBJECT_EXTENDED_LIMIT_INFORMATION = koffi.struct({
    BasicLimitInformation: JOBOBJECT_BASIC_LIMIT_INFORMATION,
    IoInfo: IO_COUNTERS,
    ProcessMemoryLimit: 'size_t',
    JobMemoryLimit: 'size_t',
    PeakProcessMemoryUsed: 'size_t',
    PeakJobMemoryUsed: 'size_t',
  });
  return {
    SID_AND_ATTRIBUTES,
    EXPLICIT_ACCESS_W,
    TOKEN_DEFAULT_DACL,
    STARTUPINFOW,
    PROCESS_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
  };
}

export type Win32Types = ReturnType<typeof defineWin32Types>;
