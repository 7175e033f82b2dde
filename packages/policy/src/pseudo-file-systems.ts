/**
 * What Linux shows under `/proc` and the other kernel file systems is not files on disk, and a
 * path through them says nothing about where it leads. Shared by the helper (a "regular" file on
 * one of these is refused), the broker's pre-check (a path spelled through a procfs alias is
 * refused) and the app-server's watches (which run in the broker, whose `/proc` is not the
 * sandbox's: a watch there would report the broker's own descriptors and processes).
 */

/**
 * Pseudo file systems whose "regular" files report a size unrelated to their content (procfs files
 * are size 0, sysfs 4096) and whose reads may have side effects or never end. Values are statfs
 * f_type magics.
 */
export const PSEUDO_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map<number, string>([
  [0x9fa0, 'procfs'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x62656570, 'configfs'],
  [0xde5e81e4, 'efivarfs'],
  [0xcafe4a11, 'bpf'],
]);

// `/proc/<pid>/root/x` is `/x` again, `/proc/self/fd/N/x` is whatever descriptor N holds: names
// that say nothing about where they lead.
const PROCFS_ALIAS =
  /^\/proc\/(?:self|thread-self|\d+)(?:\/task\/\d+)?\/(?:root|cwd|fd|fdinfo|map_files|exe)(?:\/|$)|^\/dev\/(?:fd|stdin|stdout|stderr)(?:\/|$)/;

/** Whether a native Linux path is spelled through a procfs alias (`/proc/self/cwd/…`, `/dev/fd/3`). */
export function isProcfsAlias(path: string): boolean {
  return PROCFS_ALIAS.test(path);
}
