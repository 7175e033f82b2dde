/**
 * The system call ABIs a seccomp program can be built for. A filter is bound to one architecture:
 * the same call has another number elsewhere (socket is 41 on x86_64, 198 on aarch64), so every
 * program first checks `seccomp_data.arch` and treats any other ABI the process can still enter
 * (i386 through `int 0x80` on x86_64, 32-bit arm on aarch64) as foreign. On x86_64 the x32 ABI
 * shares the architecture value and sets bit 30 of the number instead; its calls are foreign too.
 *
 * Numbers come from the kernel's uapi headers (`asm/unistd_64.h` for x86_64, the generic
 * `asm-generic/unistd.h` table aarch64 uses); the ABI never renumbers a call. Only calls some rule
 * names are listed: adding one is one line here and a test that decodes it.
 */

export type SeccompArch = 'x86_64' | 'aarch64';

export interface SeccompAbi {
  /** `AUDIT_ARCH_*` (linux/audit.h): the ELF machine, 64-bit and little-endian flags. */
  auditArch: number;
  /** The x32 marker bit of x86_64 (`__X32_SYSCALL_BIT`); null where the architecture has none. */
  x32Bit: number | null;
  syscalls: Readonly<Record<SyscallName, number>>;
}

/** Each call as [x86_64, aarch64]. */
const TABLE = {
  socket: [41, 198],
  socketpair: [53, 199],
  connect: [42, 203],
  bind: [49, 200],
  sendto: [44, 206],
  sendmsg: [46, 211],
  ioctl: [16, 29],
  prctl: [157, 167],
  seccomp: [317, 277],
  ptrace: [101, 117],
  clone: [56, 220],
  clone3: [435, 435],
  unshare: [272, 97],
  setns: [308, 268],
  mount: [165, 40],
  umount2: [166, 39],
  pivot_root: [155, 41],
  open_tree: [428, 428],
  move_mount: [429, 429],
  fsopen: [430, 430],
  fsmount: [432, 432],
  mount_setattr: [442, 442],
  personality: [135, 92],
  kexec_load: [246, 104],
  kexec_file_load: [320, 294],
  init_module: [175, 105],
  finit_module: [313, 273],
  delete_module: [176, 106],
  open_by_handle_at: [304, 265],
  io_uring_setup: [425, 425],
  io_uring_enter: [426, 426],
  io_uring_register: [427, 427],
  keyctl: [250, 219],
  add_key: [248, 217],
  request_key: [249, 218],
  bpf: [321, 280],
  perf_event_open: [298, 241],
  userfaultfd: [323, 282],
  landlock_create_ruleset: [444, 444],
  landlock_add_rule: [445, 445],
  landlock_restrict_self: [446, 446],
  execve: [59, 221],
  execveat: [322, 281],
  exit_group: [231, 94],
} as const satisfies Record<string, readonly [number, number]>;

export type SyscallName = keyof typeof TABLE;

function column(index: 0 | 1): Record<SyscallName, number> {
  return Object.fromEntries(Object.entries(TABLE).map(([name, numbers]) => [name, numbers[index]])) as Record<
    SyscallName,
    number
  >;
}

export const SECCOMP_ABIS: Readonly<Record<SeccompArch, SeccompAbi>> = {
  // EM_X86_64 (62) | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
  x86_64: { auditArch: 0xc000003e, x32Bit: 0x40000000, syscalls: column(0) },
  // EM_AARCH64 (183) | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
  aarch64: { auditArch: 0xc00000b7, x32Bit: null, syscalls: column(1) },
};

/** The seccomp architecture of a Node `process.arch`, or null where no program can be built. */
export function seccompArchOf(nodeArch: string): SeccompArch | null {
  if (nodeArch === 'x64') return 'x86_64';
  if (nodeArch === 'arm64') return 'aarch64';
  return null;
}

/** The name of a call's number on `arch`, for the disassembler (null when the table lacks it). */
export function syscallNameOf(arch: SeccompArch, nr: number): SyscallName | null {
  const syscalls = SECCOMP_ABIS[arch].syscalls;
  for (const name of Object.keys(syscalls) as SyscallName[]) if (syscalls[name] === nr) return name;
  return null;
}

/** Which architecture an `AUDIT_ARCH_*` value names, or null. */
export function archOfAuditValue(value: number): SeccompArch | null {
  for (const arch of Object.keys(SECCOMP_ABIS) as SeccompArch[])
    if (SECCOMP_ABIS[arch].auditArch === value >>> 0) return arch;
  return null;
}
