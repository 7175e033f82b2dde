import { FsError } from '@fs-sandbox/policy/core';
import {
  buildSeccompProgram,
  encodeBpf,
  type LandlockSyscallOptions,
  landlockSeccompFilter,
  type SandboxSyscallOptions,
  type SeccompArch,
  type SeccompFilterSpec,
  sandboxSeccompFilter,
  seccompArchOf,
} from '@fs-sandbox/policy/seccomp';

/**
 * The seccomp program a bwrap sandbox loads, for this machine's architecture: a pure function of
 * the options, so each is built once per process. A machine whose architecture has no syscall table
 * gets no sandbox at all (`sandbox_unavailable`) rather than one without the filter: unix sockets
 * would be reachable again, and a command would be labelled `linuxSeccomp` with nothing filtered.
 */
const programs = new Map<string, string>();

/** The program for `options`, base64-encoded (backend.ts LaunchInputs). */
export function syscallFilterProgram(
  options: SandboxSyscallOptions,
  nodeArch: string = process.arch,
): string {
  return programFor(`bwrap:${options.unixSockets}`, nodeArch, (arch) => sandboxSeccompFilter(arch, options));
}

/** The Landlock launcher's program (its rules stand in for the namespaces it has not got), base64. */
export function landlockFilterProgram(
  options: LandlockSyscallOptions,
  nodeArch: string = process.arch,
): string {
  return programFor(`landlock:${options.network}`, nodeArch, (arch) => landlockSeccompFilter(arch, options));
}

function programFor(name: string, nodeArch: string, spec: (arch: SeccompArch) => SeccompFilterSpec): string {
  const key = `${nodeArch}:${name}`;
  const known = programs.get(key);
  if (known !== undefined) return known;
  const arch = seccompArchOf(nodeArch);
  if (arch === null) {
    throw new FsError(
      'sandbox_unavailable',
      `no system call filter is defined for ${nodeArch} (only x64 and arm64); the sandbox is refused rather than run without one`,
      { kind: 'sandboxPreparation' },
    );
  }
  const program = Buffer.from(encodeBpf(buildSeccompProgram(spec(arch)).instructions)).toString('base64');
  programs.set(key, program);
  return program;
}
