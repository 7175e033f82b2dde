import type { SeccompFilterSpec, SyscallRule } from './seccomp-program.js';
import type { SeccompArch, SyscallName } from './syscall-abi.js';

/**
 * The system calls every sandboxed program (command or helper) is refused, beyond what its
 * namespaces and dropped capabilities already refuse. The test for an entry: the call reaches
 * something outside the sandbox that no mount, namespace or capability covers. Calls that need a
 * capability (mount, kexec, modules, pivot_root, setns, …) are not listed: with every capability
 * dropped the kernel refuses them already, and a later in-sandbox step (an overlay mounted in the
 * sandbox's own user namespace) may need some of them before the program starts. Nested user
 * namespaces are bwrap's `--disable-userns`. Everything else is allowed.
 */

/** errno values (asm-generic/errno-base.h). */
const EPERM = 1;
const EACCES = 13;

/** AF_UNIX (= AF_LOCAL) in linux/socket.h. */
export const AF_UNIX = 1;

export interface SandboxSyscallOptions {
  /**
   * `refused`: no AF_UNIX socket can be created (socketpair still works). `connect(2)` to a
   * pathname socket needs only write permission on the socket file, which the sandbox's uid has
   * on its own sockets whatever the mount says, and a filter cannot read the path it is given; so
   * a program that may create AF_UNIX sockets can reach every socket its view shows (tmux, the
   * session bus, docker.sock, ssh-agent). `allowed`: for a trusted launcher that connects on the
   * command's behalf to named sockets only; the command itself is filtered further by that
   * launcher.
   */
  unixSockets: 'refused' | 'allowed';
}

const refuse = (syscall: SyscallName, errno = EPERM): SyscallRule => ({
  syscall,
  action: { type: 'errno', errno },
});

/** The rules, each with why it is there. */
export function sandboxSyscallRules(options: SandboxSyscallOptions): SyscallRule[] {
  const rules: SyscallRule[] = [];
  if (options.unixSockets === 'refused') {
    // socket(AF_UNIX, …): EACCES, the errno socket(2) documents for a refused type, so libc
    // falls back (nscd, syslog, NSS modules) and programs report "permission denied". The domain
    // is an int: only the low word is compared, as the kernel reads it.
    rules.push({
      syscall: 'socket',
      action: { type: 'errno', errno: EACCES },
      when: [{ arg: 0, width: 32, op: 'eq', value: BigInt(AF_UNIX) }],
    });
  }
  rules.push(
    // io_uring runs socket, connect and open operations in the kernel without a system call a
    // filter sees: it would undo every rule here. EPERM is what io_uring_disabled answers, so
    // libuv and liburing users fall back to plain calls.
    refuse('io_uring_setup'),
    refuse('io_uring_enter'),
    refuse('io_uring_register'),
    // The kernel keyrings are not mount-namespaced: the sandbox inherits the broker's session
    // keyring and shares its uid's user keyring (Kerberos tickets, fscrypt and ecryptfs keys).
    refuse('keyctl'),
    refuse('add_key'),
    refuse('request_key'),
    // Host-wide kernel objects no namespace confines: eBPF maps and programs (where unprivileged
    // bpf is enabled), performance counters (a side channel on other processes, per
    // perf_event_paranoid), and userfaultfd (the usual tool for widening kernel race windows).
    refuse('bpf'),
    refuse('perf_event_open'),
    refuse('userfaultfd'),
  );
  return rules;
}

/**
 * The whole filter for one architecture: the rules above, everything else allowed, and any other
 * ABI killed (its numbers mean other calls, and i386's socketcall hides its arguments in memory).
 */
export function sandboxSeccompFilter(arch: SeccompArch, options: SandboxSyscallOptions): SeccompFilterSpec {
  return {
    arch,
    rules: sandboxSyscallRules(options),
    defaultAction: { type: 'allow' },
    foreignAbiAction: { type: 'kill-process' },
  };
}

/** errno for a call the filter pretends not to exist, so libc falls back to an older one. */
const ENOSYS = 38;
/** CLONE_NEWUSER in linux/sched.h. */
const CLONE_NEWUSER = 0x10000000n;

export interface LandlockSyscallOptions {
  /** The context enables the network: sockets other than AF_UNIX may be made. */
  network: boolean;
}

/**
 * The Landlock backend's rules: with no namespace around the program, what bwrap's namespaces and
 * `--disable-userns` refuse is refused here, before the rules every sandbox gets.
 */
export function landlockSyscallRules(options: LandlockSyscallOptions): SyscallRule[] {
  const rules: SyscallRule[] = [];
  // No network namespace: without the network, no socket of any family (a netlink or packet
  // socket reaches host state too; Landlock's TCP rules cover only TCP). EACCES as for AF_UNIX.
  if (!options.network) rules.push({ syscall: 'socket', action: { type: 'errno', errno: EACCES } });
  rules.push(
    // A new user namespace would give the program every capability inside it (and a way to the
    // kernel surface only namespaced root reaches). unshare takes an int, clone an unsigned long.
    {
      syscall: 'unshare',
      action: { type: 'errno', errno: EPERM },
      when: [{ arg: 0, width: 32, op: 'masked-eq', value: CLONE_NEWUSER, mask: CLONE_NEWUSER }],
    },
    {
      syscall: 'clone',
      action: { type: 'errno', errno: EPERM },
      when: [{ arg: 0, width: 64, op: 'masked-eq', value: CLONE_NEWUSER, mask: CLONE_NEWUSER }],
    },
    // clone3's flags lie in memory a filter cannot read: refused with ENOSYS, as by a kernel that
    // lacks it, so libc falls back to clone, whose flags the rule above reads.
    refuse('clone3', ENOSYS),
    // Mounts and namespace switches need capabilities the launcher dropped; refused by name as
    // well, so that a kernel bug in a capability check is not the only guard.
    refuse('setns'),
    refuse('mount'),
    refuse('umount2'),
    refuse('pivot_root'),
    refuse('open_tree'),
    refuse('move_mount'),
    refuse('fsopen'),
    refuse('fsmount'),
    refuse('mount_setattr'),
    ...sandboxSyscallRules({ unixSockets: 'refused' }),
  );
  return rules;
}

/** The Landlock backend's whole filter for one architecture. */
export function landlockSeccompFilter(arch: SeccompArch, options: LandlockSyscallOptions): SeccompFilterSpec {
  return {
    arch,
    rules: landlockSyscallRules(options),
    defaultAction: { type: 'allow' },
    foreignAbiAction: { type: 'kill-process' },
  };
}
