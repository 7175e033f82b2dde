import { fstatSync, readSync } from 'node:fs';
import {
  LANDLOCK_FS_ALL,
  LANDLOCK_FS_FILE,
  LANDLOCK_MIN_ABI,
  LANDLOCK_NET_ALL,
  LANDLOCK_SCOPE_ALL,
} from '@fs-sandbox/policy/core';

/**
 * The helper's `--landlock` mode: the Landlock backend's sandbox builder, bwrap's counterpart where
 * no namespace can be made. It restricts its own process and then executes the program in it, so
 * the program (the helper, or a command) starts already confined and everything it forks stays so:
 *
 *   --landlock [--abi] [--seccomp-fd N] [--rule MASK PATH]… [--no-tcp] [--chdir DIR]
 *              [--clearenv] [--setenv NAME VALUE]… [--drop-caps] -- PROGRAM ARGS…
 *
 * Order (each step before anything the next could be used against):
 *   1. read the seccomp program from its descriptor (the broker's sandbox-syscall rules plus the
 *      Landlock ones: no new user namespace, no mount, no socket the policy does not allow);
 *   2. open every rule's path (O_PATH), then the Landlock ruleset: every file-system right of the
 *      ABI handled (so denied unless a rule grants it), TCP bind/connect handled without a port
 *      rule when the network is off, signals and abstract unix sockets scoped to the domain;
 *   3. the session, parent-death signal, capabilities (root keeps none), no_new_privs;
 *   4. landlock_restrict_self, then the seccomp filter, then chdir and exec.
 * Any failure exits 125 with one line on stderr before the program runs: never a weaker sandbox.
 *
 * The system calls go through libc's `syscall` with bun:ffi (no compiler on the user's machine,
 * no addon). Only the Bun helper runs this; it is loaded only when asked for. A Bun process has
 * other threads, which restrict_self does not cover: they end at the exec right after it.
 */

/** Numbers of the calls libc has no wrapper for, as [x86_64, aarch64]. */
const SYSCALLS = {
  landlock_create_ruleset: [444, 444],
  landlock_add_rule: [445, 445],
  landlock_restrict_self: [446, 446],
  seccomp: [317, 277],
  capset: [126, 91],
} as const;

const O_PATH = 0o10000000;
const ENOENT = 2;
const O_CLOEXEC = 0o2000000;
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const LANDLOCK_CREATE_RULESET_VERSION = 1;
const LANDLOCK_RULE_PATH_BENEATH = 1;
const PR_SET_PDEATHSIG = 1;
const PR_CAPBSET_DROP = 24;
const PR_SET_SECUREBITS = 28;
const PR_SET_NO_NEW_PRIVS = 38;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4;
/** NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and their locks: uid 0 gains no capability at exec. */
const SECURE_BITS_NO_ROOT = 0x2f;
const SIGKILL = 9;
const SECCOMP_SET_MODE_FILTER = 1;
const LINUX_CAPABILITY_VERSION_3 = 0x20080522;
/** Above the kernel's CAP_LAST_CAP (40 in 6.x): dropping an unknown one fails with EINVAL, ignored. */
const CAP_SCAN = 64;

export interface LandlockLaunch {
  abiOnly: boolean;
  seccompFd: number | null;
  rules: Array<{ mask: number; path: string }>;
  noTcp: boolean;
  chdir: string | null;
  clearEnv: boolean;
  setEnv: Array<[string, string]>;
  dropCaps: boolean;
  argv: string[];
}

export function parseLandlockArgs(args: readonly string[]): LandlockLaunch {
  const launch: LandlockLaunch = {
    abiOnly: false,
    seccompFd: null,
    rules: [],
    noTcp: false,
    chdir: null,
    clearEnv: false,
    setEnv: [],
    dropCaps: false,
    argv: [],
  };
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    const next = (): string => {
      index += 1;
      const value = args[index];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      return value;
    };
    if (arg === '--abi') launch.abiOnly = true;
    else if (arg === '--seccomp-fd') launch.seccompFd = Number(next());
    else if (arg === '--rule') launch.rules.push({ mask: Number(next()), path: next() });
    else if (arg === '--no-tcp') launch.noTcp = true;
    else if (arg === '--chdir') launch.chdir = next();
    else if (arg === '--clearenv') launch.clearEnv = true;
    else if (arg === '--setenv') launch.setEnv.push([next(), next()]);
    else if (arg === '--drop-caps') launch.dropCaps = true;
    else if (arg === '--') {
      launch.argv = args.slice(index + 1) as string[];
      break;
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (!launch.abiOnly && launch.argv.length === 0) throw new Error('no program after --');
  for (const rule of launch.rules)
    if (!Number.isInteger(rule.mask) || rule.mask <= 0 || (rule.mask & ~LANDLOCK_FS_ALL) !== 0)
      throw new Error(`bad access mask ${rule.mask} for ${rule.path}`);
  return launch;
}

interface Libc {
  syscall(nr: number, a?: number, b?: number, c?: number, d?: number): number;
  prctl(option: number, a: number, b: number, c: number, d: number): number;
  open(path: unknown, flags: number): number;
  close(fd: number): number;
  chdir(path: unknown): number;
  setsid(): number;
  geteuid(): number;
  clearenv(): number;
  setenv(name: unknown, value: unknown, overwrite: number): number;
  execvp(file: unknown, argv: unknown): number;
  __errno_location(): unknown;
}

interface BunFfi {
  dlopen(path: string, symbols: Record<string, { args: string[]; returns: string }>): { symbols: Libc };
  ptr(view: ArrayBufferView): number;
  read: { i32(pointer: unknown, offset?: number): number };
}

function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf8');
}

export async function runLandlocked(args: readonly string[]): Promise<never> {
  const launch = parseLandlockArgs(args);
  const ffi = (await import('bun:ffi' as string)) as BunFfi;
  const arch = process.arch === 'x64' ? 0 : process.arch === 'arm64' ? 1 : null;
  if (arch === null) throw new Error(`no system call numbers for ${process.arch}`);
  const { symbols: libc } = ffi.dlopen('libc.so.6', {
    syscall: { args: ['i64', 'i64', 'i64', 'i64', 'i64'], returns: 'i64' },
    prctl: { args: ['i32', 'u64', 'u64', 'u64', 'u64'], returns: 'i32' },
    open: { args: ['ptr', 'i32'], returns: 'i32' },
    close: { args: ['i32'], returns: 'i32' },
    chdir: { args: ['ptr'], returns: 'i32' },
    setsid: { args: [], returns: 'i32' },
    geteuid: { args: [], returns: 'u32' },
    clearenv: { args: [], returns: 'i32' },
    setenv: { args: ['ptr', 'ptr', 'i32'], returns: 'i32' },
    execvp: { args: ['ptr', 'ptr'], returns: 'i32' },
    __errno_location: { args: [], returns: 'ptr' },
  });
  // bun:ffi passes exactly the declared arguments: the unused ones are zero.
  const call = libc.syscall;
  libc.syscall = (number, a = 0, b = 0, c = 0, d = 0) => call(number, a, b, c, d);
  const errno = (): number => ffi.read.i32(libc.__errno_location());
  const check = (what: string, result: number | bigint): number => {
    const value = Number(result);
    if (value < 0) throw new Error(`${what} failed (errno ${errno()})`);
    return value;
  };
  const nr = (name: keyof typeof SYSCALLS): number => SYSCALLS[name][arch];

  const abi = Number(libc.syscall(nr('landlock_create_ruleset'), 0, 0, LANDLOCK_CREATE_RULESET_VERSION));
  if (launch.abiOnly) {
    process.stdout.write(`${abi < 0 ? `unavailable errno ${errno()}` : abi}\n`);
    process.exit(0);
  }
  if (abi < LANDLOCK_MIN_ABI)
    throw new Error(`Landlock ABI ${abi < 0 ? 'unavailable' : abi} (needs ${LANDLOCK_MIN_ABI})`);

  // 1. The filter, before anything else can be opened on its number.
  let filter: Buffer | null = null;
  if (launch.seccompFd !== null) {
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(65536);
    for (;;) {
      const length = readSync(launch.seccompFd, chunk, 0, chunk.length, null);
      if (length === 0) break;
      chunks.push(Buffer.from(chunk.subarray(0, length)));
    }
    check('close seccomp input', libc.close(launch.seccompFd));
    filter = Buffer.concat(chunks);
    if (filter.length === 0 || filter.length % 8 !== 0) throw new Error('bad seccomp program');
  }

  // 2. The ruleset: struct landlock_ruleset_attr { u64 handled_access_fs, handled_access_net, scoped }.
  const attr = new BigUint64Array([
    BigInt(LANDLOCK_FS_ALL),
    BigInt(launch.noTcp ? LANDLOCK_NET_ALL : 0),
    BigInt(LANDLOCK_SCOPE_ALL),
  ]);
  const ruleset = check(
    'landlock_create_ruleset',
    libc.syscall(nr('landlock_create_ruleset'), ffi.ptr(attr), attr.byteLength, 0),
  );
  // struct landlock_path_beneath_attr { u64 allowed_access; s32 parent_fd; } packed: 12 bytes.
  const beneath = Buffer.alloc(12);
  for (const rule of launch.rules) {
    const opened = Number(libc.open(cString(rule.path), O_PATH | O_CLOEXEC));
    // Gone since the broker built the rules (a sibling in a shared directory such as /tmp that
    // its owner removed): a rule only grants, so without it the sandbox reaches less, never more.
    if (opened < 0 && errno() === ENOENT) continue;
    const fd = check(`open ${rule.path}`, opened);
    // A rule on a file may carry only the file rights; which it is comes from the opened object.
    const directory = (fstatSync(fd).mode & S_IFMT) === S_IFDIR;
    beneath.writeBigUInt64LE(BigInt(directory ? rule.mask : rule.mask & LANDLOCK_FS_FILE), 0);
    beneath.writeInt32LE(fd, 8);
    check(
      `landlock_add_rule ${rule.path}`,
      libc.syscall(nr('landlock_add_rule'), ruleset, LANDLOCK_RULE_PATH_BENEATH, ffi.ptr(beneath), 0),
    );
    libc.close(fd);
  }

  // 3. No controlling terminal to push keystrokes into (fails harmlessly when already a leader),
  // killed with the broker, and no capability kept.
  libc.setsid();
  check('PR_SET_PDEATHSIG', libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
  if (launch.dropCaps) dropCapabilities(libc, ffi, check, nr('capset'));
  check('PR_SET_NO_NEW_PRIVS', libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));

  // 4. Confined from here on; the filter last, since it may refuse calls the steps above make.
  check('landlock_restrict_self', libc.syscall(nr('landlock_restrict_self'), ruleset, 0));
  libc.close(ruleset);
  if (filter !== null) {
    // struct sock_fprog { unsigned short len; struct sock_filter *filter; } (padded to 16 bytes).
    const program = Buffer.alloc(16);
    program.writeUInt16LE(filter.length / 8, 0);
    program.writeBigUInt64LE(BigInt(ffi.ptr(filter)), 8);
    check('seccomp', libc.syscall(nr('seccomp'), SECCOMP_SET_MODE_FILTER, 0, ffi.ptr(program)));
  }
  if (launch.chdir !== null) check(`chdir ${launch.chdir}`, libc.chdir(cString(launch.chdir)));
  if (launch.clearEnv) libc.clearenv();
  for (const [name, value] of launch.setEnv)
    check(`setenv ${name}`, libc.setenv(cString(name), cString(value), 1));
  const argv = launch.argv.map(cString);
  const pointers = new BigUint64Array(argv.length + 1);
  argv.forEach((arg, index) => {
    pointers[index] = BigInt(ffi.ptr(arg));
  });
  libc.execvp(argv[0] as Buffer, ffi.ptr(pointers));
  throw new Error(`cannot execute ${launch.argv[0]} (errno ${errno()})`);
}

/**
 * The broker may run as root (containers): without namespaces the program would keep root's
 * capabilities (DAC override, CAP_KILL, CAP_SYS_ADMIN). The bounding set is emptied and the secure
 * bits locked so that no exec gives them back, then every set is cleared.
 */
function dropCapabilities(
  libc: Libc,
  ffi: BunFfi,
  check: (what: string, result: number) => number,
  capset: number,
): void {
  if (libc.geteuid() === 0) {
    check('PR_SET_SECUREBITS', libc.prctl(PR_SET_SECUREBITS, SECURE_BITS_NO_ROOT, 0, 0, 0));
    // Unknown capability numbers fail with EINVAL: the scan goes past the kernel's last one.
    for (let cap = 0; cap < CAP_SCAN; cap += 1) libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  check('PR_CAP_AMBIENT', libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
  // struct __user_cap_header_struct { u32 version; s32 pid; } and two empty data structs.
  const header = new Uint32Array([LINUX_CAPABILITY_VERSION_3, 0]);
  const data = new Uint32Array(6);
  check('capset', libc.syscall(capset, ffi.ptr(header), ffi.ptr(data)));
}
