import { describe, expect, it } from 'vitest';
import { sandboxSeccompFilter } from '../../src/seccomp/sandbox-syscall-rules.js';
import {
  checkSeccompProgram,
  describeSeccompReturn,
  disassembleSeccomp,
  runSeccompProgram,
} from '../../src/seccomp/seccomp-decode.js';
import { buildSeccompProgram } from '../../src/seccomp/seccomp-program.js';
import { SECCOMP_ABIS, type SeccompArch, type SyscallName } from '../../src/seccomp/syscall-abi.js';

const AF_UNIX = 1n;
const AF_INET = 2n;
const AF_NETLINK = 16n;
const SOCK_STREAM = 1n;
const SOCK_CLOEXEC = 0x80000n;

describe.each(['x86_64', 'aarch64'] as const)('the sandbox filter on %s', (arch: SeccompArch) => {
  const abi = SECCOMP_ABIS[arch];
  const programOf = (unixSockets: 'refused' | 'allowed') => {
    const { instructions } = buildSeccompProgram(sandboxSeccompFilter(arch, { unixSockets }));
    checkSeccompProgram(instructions);
    return instructions;
  };
  const refused = programOf('refused');
  const verdict = (
    program: ReturnType<typeof programOf>,
    call: SyscallName,
    args: bigint[] = [],
    auditArch = abi.auditArch,
  ) => describeSeccompReturn(runSeccompProgram(program, { nr: abi.syscalls[call], arch: auditArch, args }));

  it('refuses AF_UNIX sockets with EACCES, however the int is padded, and nothing else of socket()', () => {
    expect(verdict(refused, 'socket', [AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC])).toBe('ERRNO(13)');
    expect(verdict(refused, 'socket', [0xffffffff00000000n | AF_UNIX, SOCK_STREAM])).toBe('ERRNO(13)');
    expect(verdict(refused, 'socket', [AF_INET, SOCK_STREAM])).toBe('ALLOW');
    expect(verdict(refused, 'socket', [AF_NETLINK, 3n])).toBe('ALLOW');
  });

  it('keeps socketpair, connect and the rest of the process working', () => {
    for (const call of [
      'socketpair',
      'connect',
      'sendmsg',
      'clone',
      'execve',
      'ptrace',
      'prctl',
      'seccomp',
    ] as const)
      expect(verdict(refused, call, [AF_UNIX, SOCK_STREAM])).toBe('ALLOW');
  });

  it('refuses io_uring, the keyrings, bpf, perf events and userfaultfd with EPERM', () => {
    for (const call of [
      'io_uring_setup',
      'io_uring_enter',
      'io_uring_register',
      'keyctl',
      'add_key',
      'request_key',
      'bpf',
      'perf_event_open',
      'userfaultfd',
    ] as const)
      expect(verdict(refused, call)).toBe('ERRNO(1)');
  });

  it('kills a call through any other ABI', () => {
    const other = arch === 'x86_64' ? 0x40000003 : 0x40000028;
    expect(verdict(refused, 'socket', [AF_INET], other)).toBe('KILL_PROCESS');
    expect(verdict(refused, 'exit_group', [], other)).toBe('KILL_PROCESS');
  });

  it('disassembles with every call it compares named (as `fs-sandbox explain` prints it)', () => {
    const lines = disassembleSeccomp(refused);
    const notes = lines.filter((line) => line.includes(' jeq ')).map((line) => line.split('; ')[1]);
    expect(notes.filter((note) => note !== undefined)).toEqual([
      arch,
      'socket',
      'io_uring_setup',
      'io_uring_enter',
      'io_uring_register',
      'keyctl',
      'add_key',
      'request_key',
      'bpf',
      'perf_event_open',
      'userfaultfd',
    ]);
    expect(lines.at(-1)).toMatch(/ret {2}ALLOW$/);
  });

  it('lets a trusted launcher create AF_UNIX sockets when they are allowed, with the other rules kept', () => {
    const allowed = programOf('allowed');
    expect(verdict(allowed, 'socket', [AF_UNIX, SOCK_STREAM])).toBe('ALLOW');
    expect(verdict(allowed, 'io_uring_setup')).toBe('ERRNO(1)');
  });
});
