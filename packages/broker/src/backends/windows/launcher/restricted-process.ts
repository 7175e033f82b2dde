import { existsSync } from 'node:fs';
import {
  windowsCommandLine,
  windowsEnvironmentBlock,
  withWindowsRuntimeVariables,
} from '../windows-command-line.js';
import type { WindowsLaunchPlan } from '../windows-launch-protocol.js';
import type { Out, Pointer, ProcessInformation, Win32Api } from './win32-api.js';
import { win32Failure } from './win32-api.js';

const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9;
const JOB_OBJECT_LIMIT_ACTIVE_PROCESS = 0x8;
const JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x400;
const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
const STD_HANDLES = [0xfffffff6, 0xfffffff5, 0xfffffff4]; // STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE
const HANDLE_FLAG_INHERIT = 0x1;
const STARTF_USESTDHANDLES = 0x100;
const CREATE_SUSPENDED = 0x4;
const CREATE_UNICODE_ENVIRONMENT = 0x400;
// No console at all (not even a hidden one): a console would add a conhost.exe process to the job,
// which holds exactly one process. The helper speaks only through its stdio pipes.
const DETACHED_PROCESS = 0x8;
const INFINITE = 0xffffffff;
const WAIT_FAILED = 0xffffffff;

/**
 * Starts the helper with the restricted token, inside a job that dies with the launcher (so the
 * broker's timeout kill reaches it) and may hold only this one process. The helper inherits the
 * launcher's stdin/stdout/stderr pipes: the runner talks to it exactly as to any other backend.
 * `command` is the helper's argv (node first). `onStarted` is called once the helper may have run, after which the launcher no longer answers
 * for it. Returns the helper's exit code.
 */
export function runRestrictedProcess(
  api: Win32Api,
  token: Pointer,
  plan: WindowsLaunchPlan,
  command: string[],
  onStarted: () => void,
): number {
  const job = api.CreateJobObjectW(null, null);
  if (!job) throw win32Failure(api, 'CreateJobObjectW');
  try {
    limitJob(api, job, plan);
    const stdio = STD_HANDLES.map((which) => {
      const handle = api.GetStdHandle(which);
      // Only these three handles are inheritable in the launcher (node opens its own handles
      // non-inheritable), so bInheritHandles passes nothing else of the broker's to the helper.
      if (!handle || !api.SetHandleInformation(handle, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) {
        throw win32Failure(api, 'SetHandleInformation', undefined, 'a standard handle');
      }
      return handle;
    });
    const startup = {
      cb: api.koffi.sizeof(api.types.STARTUPINFOW),
      dwFlags: STARTF_USESTDHANDLES,
      hStdInput: stdio[0],
      hStdOutput: stdio[1],
      hStdError: stdio[2],
    };
    const env = withWindowsRuntimeVariables(plan.env, process.env);
    const info: Partial<ProcessInformation> = {};
    const created = api.CreateProcessAsUserW(
      token,
      command[0] as string,
      // CreateProcessW may write into the command line, so it gets a private mutable copy.
      Buffer.from(`${windowsCommandLine(command)}\0`, 'utf16le'),
      null,
      null,
      1,
      CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | DETACHED_PROCESS,
      Buffer.from(windowsEnvironmentBlock(env), 'utf16le'),
      // The helper works on absolute paths only; a cwd that no longer exists is not worth a failure.
      plan.cwd !== null && existsSync(plan.cwd) ? plan.cwd : null,
      startup,
      info,
    );
    if (!created) throw win32Failure(api, 'CreateProcessAsUserW');
    try {
      // Suspended until it is in the job: it cannot run a single instruction outside it.
      if (!api.AssignProcessToJobObject(job, info.hProcess ?? null)) {
        api.TerminateProcess(info.hProcess ?? null, 1);
        throw win32Failure(api, 'AssignProcessToJobObject');
      }
      onStarted();
      if (api.ResumeThread(info.hThread ?? null) === 0xffffffff) {
        api.TerminateProcess(info.hProcess ?? null, 1);
        throw win32Failure(api, 'ResumeThread');
      }
      if (api.WaitForSingleObject(info.hProcess ?? null, INFINITE) === WAIT_FAILED) {
        throw win32Failure(api, 'WaitForSingleObject');
      }
      const code: Out<number> = [0];
      if (!api.GetExitCodeProcess(info.hProcess ?? null, code)) throw win32Failure(api, 'GetExitCodeProcess');
      return code[0];
    } finally {
      api.CloseHandle(info.hThread ?? null);
      api.CloseHandle(info.hProcess ?? null);
    }
  } finally {
    api.CloseHandle(job);
  }
}

function limitJob(api: Win32Api, job: Pointer, plan: WindowsLaunchPlan): void {
  const info = {
    BasicLimitInformation: {
      PerProcessUserTimeLimit: 0,
      PerJobUserTimeLimit: 0,
      LimitFlags:
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
        JOB_OBJECT_LIMIT_ACTIVE_PROCESS |
        JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
      MinimumWorkingSetSize: 0,
      MaximumWorkingSetSize: 0,
      ActiveProcessLimit: plan.job.activeProcessLimit,
      Affinity: 0,
      PriorityClass: 0,
      SchedulingClass: 0,
    },
    ProcessMemoryLimit: 0,
    JobMemoryLimit: 0,
  };
  const size = api.koffi.sizeof(api.types.JOBOBJECT_EXTENDED_LIMIT_INFORMATION);
  if (!api.SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, info, size)) {
    throw win32Failure(api, 'SetInformationJobObject');
  }
}
