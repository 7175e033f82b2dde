/**
 * procfs and sysfs entries no sandboxed program may write or read, whatever the policy grants:
 * the OCI runtimes' defaults (runc's spec template, moby's `oci/defaults.go`), since a sandbox
 * faces the same kernel a container does. bwrap's `--proc` mounts a procfs of the sandbox's own pid
 * namespace, but much of procfs is the host's kernel, and permission there is checked against the
 * caller's uid on the host, not its capabilities: a broker running as root gives its sandbox a uid
 * that may write `/proc/sys/kernel/core_pattern` (whose `|program` the kernel then runs as root, in
 * the host's namespaces, at the next crash). `/sys` is shown only by a full-disk read (a read-only
 * bind of `/`), but its files are readable there.
 *
 * Each entry is applied only where it exists on this kernel (a mount needs its target) and where
 * the sandbox shows it, after every mount of the policy, so that no grant can undo it.
 */

export interface KernelPath {
  path: string;
  why: string;
}

/**
 * Shown read-only: bound from the host's procfs onto the sandbox's, read-only (their contents are
 * those of the caller's namespaces whichever procfs shows them). A write fails with EROFS.
 */
export const READ_ONLY_KERNEL_PATHS: readonly KernelPath[] = [
  {
    path: '/proc/bus',
    why: 'PCI and USB device configuration of the host (a write reprograms a device)',
  },
  {
    path: '/proc/fs',
    why: "file system drivers' settings (nfsd exports, ext4 and jbd2 tunables) shared by the whole host",
  },
  {
    path: '/proc/irq',
    why: 'interrupt routing of the host (smp_affinity): a write moves interrupts between its CPUs',
  },
  {
    path: '/proc/sys',
    why: "the kernel's sysctls: core_pattern (a program the kernel runs as root on a crash), modprobe, drop_caches, hostname of the UTS namespace, …; write access is by host uid",
  },
  {
    path: '/proc/sysrq-trigger',
    why: 'one character written reboots, crashes or freezes the host (no capability checked, only the file mode)',
  },
];

/**
 * Masked: a file by /dev/null bound read-only (bwrap's binds are `nodev`: opening it fails), a
 * directory by an empty read-only tmpfs of mode 000. Information about the host that no namespace
 * confines, or a way to act on it.
 */
export const MASKED_KERNEL_PATHS: readonly KernelPath[] = [
  {
    path: '/proc/acpi',
    why: 'ACPI state of the host machine, and writable event and wakeup controls on old kernels',
  },
  { path: '/proc/asound', why: "the host's sound cards, and what plays on them" },
  {
    path: '/proc/interrupts',
    why: 'per-CPU interrupt counts of the whole host: a side channel on other processes (moby GHSA-6fw5-f8r9-fgfm)',
  },
  { path: '/proc/kcore', why: "the host kernel's memory as an ELF core file" },
  { path: '/proc/keys', why: 'the kernel keyrings visible to the uid, with descriptions' },
  {
    path: '/proc/latency_stats',
    why: 'scheduler latency records of every host process, and a write resets them',
  },
  { path: '/proc/sched_debug', why: "the scheduler's view of every host task (names, pids, run times)" },
  { path: '/proc/scsi', why: "the host's SCSI devices, and a write adds or removes one" },
  { path: '/proc/timer_list', why: 'every pending timer of the host, with the owning task names and pids' },
  { path: '/proc/timer_stats', why: 'timer usage of every host process, by pid and name (older kernels)' },
  {
    path: '/sys/devices/virtual/powercap',
    why: "RAPL energy counters: a side channel that leaks what the host's CPUs compute (Platypus, moby GHSA-jq35-85cj-fj4p)",
  },
  {
    path: '/sys/firmware',
    why: "the machine's firmware tables (ACPI, DMI with serial numbers, EFI variables)",
  },
];

/**
 * Per-CPU thermal throttling counters leak CPU activity like /proc/interrupts (moby masks them for
 * GHSA-6fw5-f8r9-fgfm). Where they exist depends on the CPUs present, so they are listed at set-up.
 */
export const CPU_DEVICES_DIR = '/sys/devices/system/cpu';
export const CPU_THERMAL_THROTTLE = 'thermal_throttle';
export const CPU_THERMAL_WHY =
  'per-CPU throttling counters: a side channel on host CPU activity (moby GHSA-6fw5-f8r9-fgfm)';
