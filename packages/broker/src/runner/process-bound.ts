import { accessSync, constants, readdirSync, readFileSync, rmdirSync } from 'node:fs';

/**
 * A bound on the tasks (processes and threads) one command's sandbox may hold, so that a fork bomb
 * is stopped by count and not only by time. The kernel offers two mechanisms; the first this
 * machine allows is used, detected once per broker:
 *
 *   1. A cgroup with the `pids` controller the broker may create children in: cgroup v2 where the
 *      broker's own cgroup delegates `pids` to its children (`cgroup.subtree_control`), else the
 *      cgroup v1 `pids` hierarchy (writable as root). Each command gets a child cgroup of its own
 *      with `pids.max`, entered by the launcher before bwrap runs (command-cgroup.ts), so nothing the
 *      command starts is outside it, and removed when the command has ended.
 *   2. RLIMIT_NPROC, set inside the sandbox by `prlimit` before the command: the kernel counts a
 *      uid's tasks per user namespace, and each sandbox has its own, so the limit counts exactly
 *      that sandbox's tasks. The kernel never applies RLIMIT_NPROC to uid 0, so this bounds only a
 *      broker that does not run as root; set before bwrap it would count every task of the uid on
 *      the host instead.
 *   3. None: `doctor` says why.
 */

/** Tasks one command's sandbox may hold unless configured otherwise (createBroker maxProcesses). */
export const DEFAULT_MAX_PROCESSES = 1024;

export type ProcessBoundMechanism =
  | { kind: 'cgroup'; version: 1 | 2; parent: string }
  | { kind: 'rlimit'; prlimit: string }
  | { kind: 'none'; why: string };

/** Where a command's cgroup is made, or where prlimit is: what the launch carries. */
export type ProcessBound =
  | { kind: 'cgroup'; parent: string; max: number }
  | { kind: 'rlimit'; prlimit: string; max: number };

/** The reads detection makes, injectable for tests. */
export interface ProcessBoundHost {
  uid: number;
  readText(path: string): string | null;
  writable(path: string): boolean;
  executable(path: string): boolean;
}

/** The prlimit of util-linux, where distributions put it: inside the sandbox it is under /usr. */
const PRLIMIT = '/usr/bin/prlimit';

/** Prefix of each command cgroup's name: `fs-sandbox-<broker pid>-<n>`. */
export const CGROUP_PREFIX = 'fs-sandbox-';

const realHost: ProcessBoundHost = {
  uid: process.getuid?.() ?? -1,
  readText(path) {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  },
  writable: (path) => permitted(path, constants.W_OK),
  executable: (path) => permitted(path, constants.X_OK),
};

function permitted(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

let detected: ProcessBoundMechanism | null = null;

/** The mechanism of this machine for this broker (detected once; see the module comment). */
export function processBoundMechanism(): ProcessBoundMechanism {
  if (detected === null) {
    detected = detectProcessBound(realHost);
    if (detected.kind === 'cgroup') removeStaleCgroups(detected.parent);
  }
  return detected;
}

export function detectProcessBound(host: ProcessBoundHost): ProcessBoundMechanism {
  const cgroups = host.readText('/proc/self/cgroup');
  const mounts = host.readText('/proc/self/mountinfo');
  const reasons: string[] = [];
  if (cgroups !== null && mounts !== null) {
    const v2 = cgroupDirectory(cgroups, mounts, 2);
    if (v2 !== null) {
      const delegated = (host.readText(`${v2}/cgroup.subtree_control`) ?? '').split(/\s+/).includes('pids');
      if (delegated && host.writable(v2)) return { kind: 'cgroup', version: 2, parent: v2 };
      reasons.push(
        delegated
          ? `this user cannot make cgroups in ${v2}`
          : `the broker's cgroup v2 (${v2}) does not delegate the pids controller`,
      );
    }
    const v1 = cgroupDirectory(cgroups, mounts, 1);
    if (v1 !== null) {
      if (host.writable(v1)) return { kind: 'cgroup', version: 1, parent: v1 };
      reasons.push(`this user cannot make cgroups in the pids hierarchy (${v1})`);
    } else reasons.push('no cgroup v1 pids hierarchy is mounted');
  } else reasons.push('the cgroups of this process cannot be read');
  if (host.uid === 0) {
    reasons.push('RLIMIT_NPROC never applies to root');
    return { kind: 'none', why: reasons.join('; ') };
  }
  if (host.executable(PRLIMIT)) return { kind: 'rlimit', prlimit: PRLIMIT };
  reasons.push(`${PRLIMIT} (util-linux) is not installed to set RLIMIT_NPROC inside the sandbox`);
  return { kind: 'none', why: reasons.join('; ') };
}

/**
 * The directory of this process's cgroup in the v2 hierarchy, or in the v1 hierarchy holding the
 * pids controller, from /proc/self/cgroup and the mount that shows it (null: none).
 */
export function cgroupDirectory(cgroups: string, mountinfo: string, version: 1 | 2): string | null {
  const line = cgroups.split('\n').find((entry) => {
    const [id, controllers] = entry.split(':');
    return version === 2 ? id === '0' && controllers === '' : (controllers ?? '').split(',').includes('pids');
  });
  if (line === undefined) return null;
  const path = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
  for (const mount of mountinfo.split('\n')) {
    const [before, after] = mount.split(' - ');
    if (before === undefined || after === undefined) continue;
    const fields = before.split(' ');
    const [fstype, , superOptions] = after.split(' ');
    const matches =
      version === 2
        ? fstype === 'cgroup2'
        : fstype === 'cgroup' && (superOptions ?? '').split(',').includes('pids');
    if (!matches) continue;
    const root = unescapeMountField(fields[3] ?? '');
    const point = unescapeMountField(fields[4] ?? '');
    if (path !== root && !path.startsWith(root === '/' ? '/' : `${root}/`)) continue;
    const below = root === '/' ? path : path.slice(root.length);
    return below === '/' || below === '' ? point : `${point}${below}`;
  }
  return null;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * Command cgroups a broker that has since died left behind (its pid is gone): removed, as empty
 * directories only (rmdir refuses a cgroup that still holds a task).
 */
function removeStaleCgroups(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^fs-sandbox-(\d+)-\d+$/.exec(name);
    if (match === null || Number(match[1]) === process.pid || isAlive(Number(match[1]))) continue;
    try {
      rmdirSync(`${parent}/${name}`);
    } catch {
      // Still holds a task, or already gone.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The bound a command gets: null when `max` is null (unbounded by request) or the machine has none. */
export function processBoundFor(max: number | null, mechanism: ProcessBoundMechanism): ProcessBound | null {
  if (max === null || mechanism.kind === 'none') return null;
  return mechanism.kind === 'cgroup'
    ? { kind: 'cgroup', parent: mechanism.parent, max }
    : { kind: 'rlimit', prlimit: mechanism.prlimit, max };
}

/** How `doctor` and `explain` put it. */
export function describeProcessBound(mechanism: ProcessBoundMechanism, max: number | null): string {
  if (max === null) return 'none: turned off (maxProcesses null)';
  switch (mechanism.kind) {
    case 'cgroup':
      return `cgroup v${mechanism.version} pids.max ${max} per command (a cgroup of its own under ${mechanism.parent})`;
    case 'rlimit':
      return `RLIMIT_NPROC ${max} per command, set in its sandbox's user namespace by ${mechanism.prlimit}`;
    case 'none':
      return `none: ${mechanism.why}`;
  }
}
