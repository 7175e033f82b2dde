import type { SandboxPlan } from '@fs-sandbox/policy';
import {
  FsError,
  hasLoneSurrogate,
  joinPath,
  normalizeNativePath,
  pathStartsWith,
  relativeSegments,
} from '@fs-sandbox/policy/core';
import type { SandboxSyscallOptions } from '@fs-sandbox/policy/seccomp';
import { FIRST_LAUNCH_INPUT_FD, type HelperRuntime, runtimeFiles } from '../backend.js';
import { MASKED_KERNEL_PATHS, READ_ONLY_KERNEL_PATHS } from './kernel-paths.js';
import type { PathFact, PathFacts } from './path-facts.js';

/**
 * Pure translation of a SandboxPlan into bubblewrap arguments. Facts about the host tree
 * come in from path-facts.ts; nothing here touches the disk, so every decision has a golden test.
 */

/** bwrap's part of a launch, and what it mounts from the host (recorded as each mount is emitted). */
export interface BwrapSandbox {
  /** bwrap's argv after the program name, ending in `--`: node's command line follows it. */
  args: string[];
  /** Every host-dependent mount point (binds, masks), in argv order. */
  mountPoints: string[];
  /** Host directories and files bound in as roots: not the helper's own files, not the deny masks. */
  boundRoots: string[];
  /** The directory the sandboxed program starts in (`/` when the plan's cwd is not shown). */
  cwd: string;
  /** The seccomp filter bwrap loads from the first launch input (`--seccomp`), as rules to build. */
  syscalls: SandboxSyscallOptions;
  /** Empty launch inputs after the filter, each the content of a masked kernel file. */
  emptyInputs: number;
  /** The descriptor of the filter, the first input (the others follow it). */
  firstInputFd: number;
}

/** Namespaces, session and capabilities: identical for every helper run. */
export const ISOLATION_ARGS: readonly string[] = [
  // setsid(): no controlling terminal, so the helper cannot push keystrokes into the broker's tty (TIOCSTI).
  '--new-session',
  // SIGKILL the helper when bwrap or the broker dies: no helper may outlive its request.
  '--die-with-parent',
  // Own user namespace: the helper's mounts and capabilities are confined to it.
  '--unshare-user',
  // Own pid namespace: the helper sees no host process (nor its /proc/<pid>/environ), and when
  // bwrap's init dies the kernel kills everything left inside.
  '--unshare-pid',
  // No network at all: file operations never need it, and it closes exfiltration.
  '--unshare-net',
  '--unshare-ipc',
  '--unshare-uts',
  // Cgroup namespaces are missing on some kernels and only hide cgroup paths; not worth failing for.
  '--unshare-cgroup-try',
  // No nested user namespace: a helper could otherwise regain capabilities in a child namespace.
  '--disable-userns',
  // The broker may run as root (containers): without this the helper would keep root's
  // capabilities inside the sandbox (DAC override ignores the deny masks' permissions).
  '--cap-drop',
  'ALL',
];

/** Bound by bwrap from the host: a character device on a `nodev` mount (bwrap's non-dev binds), so opening it fails. */
const EMPTY_DENY_FILE = '/dev/null';

type MountKind = 'read' | 'write' | 'deny' | 'dev' | 'proc';

interface Mount {
  path: string;
  kind: MountKind;
  /** Set on another name of a read-only entry: the facts of what it names (no symlink in it). */
  alias?: PathFact;
  /** An executable-surface name directly under a writable root (`<root>/.git`). */
  surface?: true;
  /** A self-bind of a directory holding a mask inside a writable root (see `pinsOf`). */
  pin?: true;
}

/** What a mount inherits from its nearest mounted ancestor (or the base layer) that is already read-only. */
const READ_ONLY_VIEWS: ReadonlySet<string> = new Set(['read', 'base-read', 'dev', 'proc']);

/** When two plan entries name the same path, the stricter one decides. */
const STRICTNESS: Record<MountKind, number> = { write: 0, read: 1, deny: 2, dev: 3, proc: 3 };

/**
 * The paths whose facts `buildBwrapSandbox` reads (the backend collects exactly these), given the
 * per-CPU kernel paths the backend listed (kernel-paths.ts).
 */
export function bwrapFactPaths(
  plan: SandboxPlan,
  runtime: HelperRuntime,
  denyGlobMatches: readonly string[] = [],
  cpuKernelPaths: readonly string[] = [],
): string[] {
  const paths = planMounts(plan, runtime, denyGlobMatches)
    .filter((mount) => mount.kind !== 'dev' && mount.kind !== 'proc')
    .map((mount) => mount.path);
  if (plan.cwd !== null) paths.push(plan.cwd);
  paths.push(...(plan.unshownDeniedPaths ?? []), ...(plan.unshownReadOnlyPaths ?? []));
  paths.push(...kernelPaths(cpuKernelPaths).map((entry) => entry.path));
  return paths;
}

/** Whether the plan shows anything of /sys (only then are the sysfs masks and their facts needed). */
export function planShowsSysfs(plan: SandboxPlan): boolean {
  const roots = [...plan.readableRoots, ...plan.writableRoots.map((root) => root.root)];
  return (
    isRootReadable(plan) ||
    roots.some((root) => pathStartsWith('linux', root, '/sys') || pathStartsWith('linux', '/sys', root))
  );
}

export function buildBwrapSandbox(plan: SandboxPlan, facts: PathFacts, runtime: HelperRuntime): BwrapSandbox {
  const mounts = planMounts(plan, runtime, facts.denyGlobMatches);
  for (const mount of mounts) validatePath(mount.path);
  refuseRuntimeInsideDeny(plan, runtime);
  const writableRoots = plan.writableRoots.map((root) => root.root);

  const argv = new BwrapArgv(runtime, plan.network === true, plan.launchChannel === true);
  const { args } = argv;
  // The whole host tree read-only when everything is readable (a `root:read` narrowed by denies
  // included). Otherwise an empty tmpfs that only gets the readable roots; it is remounted
  // read-only at the end so a write outside every writable root FAILS (EROFS) instead of landing in
  // a throw-away tmpfs and being reported as a success (the reference's silent data loss).
  const rootReadable = isRootReadable(plan);
  if (rootReadable) argv.bind('--ro-bind', '/');
  else args.push('--tmpfs', '/');

  const emitted: Mount[] = [];
  const remounts: string[] = [];
  // Ancestors before descendants: a mount placed before the bind that contains it would be hidden
  // by that bind, so every mask comes after the bind it narrows.
  const aliases = otherSpellingsOfReadOnly(plan, mounts, facts);
  for (const mount of sortAncestorsFirst([...mounts, ...aliases])) {
    if (mount.kind === 'dev' || mount.kind === 'proc') {
      // A fresh devtmpfs-like /dev with only the safe nodes, and a procfs of the new pid namespace.
      args.push(mount.kind === 'dev' ? '--dev' : '--proc', mount.path);
      // --dev is a writable tmpfs (with /dev/shm a plain directory in it): a file made there would
      // be reported as written yet never reach the host, so it is remounted read-only like the base.
      // Device nodes stay writable (a read-only mount does not stop writes to /dev/null).
      if (mount.kind === 'dev') remounts.push(mount.path);
      emitted.push(mount);
      continue;
    }
    const parent = nearestEmittedAncestor(emitted, mount.path);
    const inherited = parent?.kind ?? (rootReadable ? 'base-read' : 'hidden');
    // Redundant mounts are skipped: a read grant where the view is already read-only, a deny
    // inside a deny, a deny of a path the sandbox does not show at all.
    if (mount.kind === 'read' && READ_ONLY_VIEWS.has(inherited)) continue;
    if (mount.kind === 'deny' && (inherited === 'hidden' || inherited === 'deny')) continue;
    // Another name only needs closing where a writable bind shows it; inside a deny it stays masked.
    if (mount.alias !== undefined && inherited !== 'write') continue;
    if (mount.pin && !keepPin(mount, mounts, facts, inherited)) continue;
    const fact = mount.alias ?? factOf(facts, mount.path);
    // A symlink standing on a surface name (`.codex -> /usr`, planted from inside) is not mounted:
    // the guard refuses writes there by name, and mounting would either follow the link or refuse
    // the whole sandbox for a link the helper may now remove.
    if (mount.surface && crossesRewritableSymlink(fact, facts)) continue;
    refuseRewritableSymlink(mount.path, fact, facts, writableRoots);
    // A missing path is never mounted: bwrap would create a placeholder for it on the host (inside a
    // writable bind) or fail. Missing deny/read-only paths under a writable root could then be
    // created from inside; the broker's pre-check refuses such requests with the rule instead.
    if (fact.kind === 'missing') continue;
    switch (mount.kind) {
      case 'read':
        if (fact.linkText !== null) {
          // A readable root that is itself a symlink (e.g. /bin -> usr/bin) is recreated as the same
          // symlink: binding would mount whatever the link pointed at during set-up, while the link
          // exposes nothing beyond what the other roots already grant.
          args.push('--symlink', fact.linkText, mount.path);
        } else {
          argv.bind('--ro-bind', mount.path);
        }
        emitted.push(mount);
        break;
      case 'write':
        argv.bind('--bind', mount.path);
        emitted.push(mount);
        break;
      case 'deny':
        if (fact.kind === 'directory') {
          // An empty tmpfs in place of the directory. Mode 000 so nothing can be listed, read or
          // created even by the sandbox's own uid (capabilities are dropped); 0111 only when a deeper
          // entry grants access inside, which then stays reachable by its exact path. Remounted
          // read-only once the inner mounts exist, so the helper cannot chmod its way in.
          argv.maskDirectory(mount.path, hasGrantInside(mounts, facts, mount.path) ? '0111' : '0000');
          remounts.push(mount.path);
        } else {
          argv.maskFile(mount.path);
        }
        emitted.push(mount);
        break;
    }
  }
  const deniedNames = [
    ...mounts.filter((mount) => mount.kind === 'deny').map((mount) => mount.path),
    ...(plan.unshownDeniedPaths ?? []),
  ];
  for (const { path, directory } of otherSpellingsOfDenied(deniedNames, facts, emitted)) {
    validatePath(path);
    // Mounted last and always closed (0000): nothing deeper is granted through a second name.
    if (directory) {
      argv.maskDirectory(path, '0000');
      remounts.push(path);
    } else argv.maskFile(path);
  }
  // Last of all mounts, so that no grant or mask of the policy can undo them.
  for (const { path, mode } of kernelMounts(facts, emitted, rootReadable)) {
    validatePath(path);
    if (mode === 'read-only') args.push('--ro-bind', path, path);
    else if (factOf(facts, path).kind === 'directory') {
      args.push('--perms', '0000', '--tmpfs', path);
      remounts.push(path);
    } else argv.maskKernelFile(path);
  }
  for (const path of remounts) args.push('--remount-ro', path);
  if (!rootReadable) args.push('--remount-ro', '/');

  // Only the allowlisted variables reach the helper: no keys, proxies, NODE_OPTIONS or LD_PRELOAD.
  args.push('--clearenv');
  for (const name of Object.keys(runtime.env).sort()) {
    args.push('--setenv', validEnvName(name), validEnvValue(name, runtime.env[name] as string));
  }
  const cwd = sandboxCwd(plan, rootReadable, facts, emitted);
  args.push('--chdir', cwd);
  args.push('--');
  return {
    args,
    mountPoints: argv.mountPoints,
    boundRoots: argv.boundRoots,
    cwd,
    syscalls: { unixSockets: 'refused' },
    emptyInputs: argv.emptyInputs,
    firstInputFd: argv.firstInputFd,
  };
}

/**
 * bwrap's argv being built, with every mount of host content recorded as it is emitted: the mount
 * list a warm helper's freshness is proved against is then exactly what the argv mounts.
 */
class BwrapArgv {
  readonly args: string[];
  readonly mountPoints: string[] = [];
  readonly boundRoots: string[] = [];
  emptyInputs = 0;
  readonly firstInputFd: number;
  private readonly runtimeFiles: ReadonlySet<string>;

  constructor(runtime: HelperRuntime, network: boolean, launchChannel: boolean) {
    this.runtimeFiles = new Set(runtimeFiles(runtime));
    // Only a command whose context enables the network keeps the host's network namespace.
    this.args = ISOLATION_ARGS.filter((arg) => !(network && arg === '--unshare-net'));
    // A command's channel to the broker takes the first descriptor; the inputs follow it.
    this.firstInputFd = FIRST_LAUNCH_INPUT_FD + (launchChannel ? 1 : 0);
    // The system call filter (sandbox-syscall-rules.ts), read from the first launch input and
    // applied by bwrap to its init and to the program, right before it executes it.
    this.args.push('--seccomp', String(this.firstInputFd));
  }

  /**
   * A kernel file masked as the OCI runtimes mask it, but closed to writes as well: an empty file
   * bwrap makes from an input that gives no bytes, mode 000, bound read-only (a /dev/null bind,
   * as denied files get, passes `test -w` though it cannot be opened).
   */
  maskKernelFile(path: string): void {
    this.emptyInputs += 1;
    const fd = this.firstInputFd + this.emptyInputs;
    this.args.push('--perms', '0000', '--ro-bind-data', String(fd), path);
  }

  /** The host path mounted at the same path. */
  bind(option: '--bind' | '--ro-bind', path: string): void {
    this.args.push(option, path, path);
    this.mountPoints.push(path);
    // The runtime files are the helper's own program, not a tree a request acts on: a rebuilt
    // bundle does not make what a waiting helper sees of the policy's paths stale.
    if (!this.runtimeFiles.has(path)) this.boundRoots.push(path);
  }

  /**
   * A denied file becomes a read-only bind of /dev/null: bwrap's binds are `nodev`, so any open for
   * reading or writing fails (EACCES), nothing of the original is readable, and renaming or
   * unlinking a mount point fails (EBUSY). No temporary file, no host side effect.
   */
  maskFile(path: string): void {
    this.args.push('--ro-bind', EMPTY_DENY_FILE, path);
    this.mountPoints.push(path);
  }

  /** An empty tmpfs with mode `perms` in place of a denied directory (the caller remounts it read-only). */
  maskDirectory(path: string, perms: '0000' | '0111'): void {
    this.args.push('--perms', perms, '--tmpfs', path);
    this.mountPoints.push(path);
  }
}

/**
 * A denied path may be visible in the sandbox under a second name when a symlink lies on either
 * side: the deny spelled through a link (`/l/p/secret`, link `/l` -> `/r`) under a root bound by its
 * real path (`/r/p`), or a root spelled through a link holding the deny's real path. The mask at the
 * policy's spelling alone then covers nothing (it is skipped as not shown, or mounted elsewhere)
 * and the file stays readable under the root's name. Returns the sandbox names of each denied
 * path's real location inside every bound root, other than the names already masked.
 */
function otherSpellingsOfDenied(
  denied: string[],
  facts: PathFacts,
  emitted: Mount[],
): Array<{ path: string; directory: boolean }> {
  const masked = new Set(emitted.filter((mount) => mount.kind === 'deny').map((mount) => mount.path));
  const spellings = new Map<string, boolean>();
  for (const deny of denied) {
    const fact = factOf(facts, deny);
    if (fact.kind === 'missing') continue;
    const real = fact.real ?? deny;
    for (const bound of emitted) {
      // A read-only entry's other name lies inside a write root, which this loop visits itself.
      // A pin shows what its writable root shows already.
      if ((bound.kind !== 'read' && bound.kind !== 'write') || bound.alias !== undefined || bound.pin)
        continue;
      // A root recreated as a symlink shows its target's mount, which is masked on its own.
      if (factOf(facts, bound.path).linkText !== null && bound.kind === 'read') continue;
      const below = relativeSegments('linux', real, factOf(facts, bound.path).real ?? bound.path);
      if (below === null) continue;
      const name = joinPath('linux', bound.path, ...below);
      const covered = [...masked].some((path) => pathStartsWith('linux', name, path));
      if (!covered) spellings.set(name, fact.kind === 'directory');
    }
  }
  return [...spellings.keys()].sort().map((path) => ({ path, directory: spellings.get(path) === true }));
}

/**
 * A read-only entry spelled through a symlink (`/l/p/docs`, link `/l` -> `/r`) names an object that a
 * writable root bound by its real path (`/r/p`) also shows, as `/r/p/docs`; mounting the entry under
 * its own spelling alone (or not at all, when full-disk read makes it redundant) leaves that name
 * writable. Returns a read-only mount for each such name inside a writable root that the plan does
 * not mount already; the caller places it after the root's bind and keeps it only where that bind
 * is what shows it.
 */
function otherSpellingsOfReadOnly(plan: SandboxPlan, mounts: Mount[], facts: PathFacts): Mount[] {
  // A pin is no read-only mount: the entry's other name may be where one is planned.
  const planned = new Set(mounts.filter((mount) => !mount.pin).map((mount) => mount.path));
  const entries = [
    ...mounts.filter((mount) => mount.kind === 'read').map((mount) => mount.path),
    ...(plan.unshownReadOnlyPaths ?? []),
  ];
  const aliases = new Map<string, Mount>();
  for (const entry of entries) {
    const fact = factOf(facts, entry);
    if (fact.kind === 'missing') continue;
    const real = fact.real ?? entry;
    for (const root of mounts) {
      if (root.kind !== 'write') continue;
      const below = relativeSegments('linux', real, factOf(facts, root.path).real ?? root.path);
      if (below === null) continue;
      const path = joinPath('linux', root.path, ...below);
      if (planned.has(path)) continue;
      validatePath(path);
      aliases.set(path, {
        path,
        kind: 'read',
        alias: { kind: fact.kind, linkText: null, symlinksCrossed: [] },
      });
    }
  }
  return [...aliases.values()];
}

/** The kernel's paths this sandbox covers (kernel-paths.ts), the per-CPU ones included. */
function kernelPaths(
  cpuKernelPaths: readonly string[],
): Array<{ path: string; mode: 'read-only' | 'masked' }> {
  return [
    ...READ_ONLY_KERNEL_PATHS.map((entry) => ({ path: entry.path, mode: 'read-only' as const })),
    ...MASKED_KERNEL_PATHS.map((entry) => ({ path: entry.path, mode: 'masked' as const })),
    ...cpuKernelPaths.map((path) => ({ path, mode: 'masked' as const })),
  ];
}

/**
 * The kernel paths to mount: those that exist and that the sandbox shows. Everything under /proc
 * is shown (bwrap's procfs); a /sys path where a full-disk read or a granted root shows it, or a
 * grant lies inside it. Under a deny mask it is hidden already.
 */
function kernelMounts(
  facts: PathFacts,
  emitted: Mount[],
  rootReadable: boolean,
): Array<{ path: string; mode: 'read-only' | 'masked' }> {
  return kernelPaths(facts.cpuKernelPaths ?? []).filter(({ path }) => {
    if (factOf(facts, path).kind === 'missing') return false;
    const parent = nearestEmittedAncestor(emitted, path);
    if (parent !== undefined) return parent.kind !== 'deny';
    return (
      rootReadable ||
      emitted.some((mount) => mount.kind !== 'deny' && pathStartsWith('linux', mount.path, path))
    );
  });
}

function isRootReadable(plan: SandboxPlan): boolean {
  return plan.fullDiskRead || plan.readableRoots.includes('/');
}

function planMounts(plan: SandboxPlan, runtime: HelperRuntime, denyGlobMatches: readonly string[]): Mount[] {
  const candidates: Mount[] = [
    { path: '/dev', kind: 'dev' },
    { path: '/proc', kind: 'proc' },
  ];
  if (!isRootReadable(plan)) for (const path of plan.readableRoots) candidates.push({ path, kind: 'read' });
  // The exact runtime files, always re-bound read-only: if one lies inside a writable root, the
  // helper must not be able to rewrite the program the next helper runs.
  for (const path of runtimeFiles(runtime)) candidates.push({ path, kind: 'read' });
  for (const writable of plan.writableRoots) {
    candidates.push({ path: writable.root, kind: 'write' });
    for (const path of writable.readOnlySubpaths) candidates.push({ path, kind: 'read' });
    const command = writable.commandSurface;
    if (command !== undefined) {
      // A command: its scan found the surface at every depth. Executable parts read-only, each git
      // directory pinned, the repository's data writable (runner/command-surface.ts).
      for (const path of command.readOnly) candidates.push({ path, kind: 'read', surface: true });
      for (const path of command.pinned) candidates.push({ path, kind: 'write', surface: true, pin: true });
      continue;
    }
    // Existing .git/.agents/.codex are re-bound read-only (missing ones, and any deeper: the guard).
    for (const name of writable.protectedNames)
      candidates.push({ path: joinPath('linux', writable.root, name), kind: 'read', surface: true });
  }
  // Deny globs have no mount form: the paths they match now are masked like denied paths.
  for (const path of [...plan.deniedPaths, ...denyGlobMatches]) candidates.push({ path, kind: 'deny' });
  candidates.push(...pinsOf(plan, candidates));

  const byPath = new Map<string, Mount>();
  for (const mount of candidates) {
    const existing = byPath.get(mount.path);
    if (!existing || STRICTNESS[mount.kind] > STRICTNESS[existing.kind]) byPath.set(mount.path, mount);
  }
  return [...byPath.values()];
}

/**
 * A mask (deny, read-only) inside a writable root holds only while its path does: `mv secret s2`
 * from a command leaves `s2/key.txt` where the next sandbox masks nothing (its mask is planned at
 * `secret/key.txt`, now missing). Every directory between the writable root and a mask is therefore
 * bound onto itself: a mount point cannot be renamed or removed (`EBUSY`), so the masked path keeps
 * its name for as long as any sandbox of this policy runs. Files and directories inside stay
 * writable; only the pinned names themselves are fixed. Kept only above masks that are mounted
 * (`keepPin`).
 */
function pinsOf(plan: SandboxPlan, mounts: readonly Mount[]): Mount[] {
  const roots = plan.writableRoots.map((root) => root.root);
  const pins = new Map<string, Mount>();
  for (const mount of mounts) {
    // A repository's parts are not pinned above: moving a repository is fine (the command's sweep
    // knows it by identity), and its own git directory is pinned where it is.
    if ((mount.kind !== 'deny' && mount.kind !== 'read') || mount.surface) continue;
    const root = roots
      .filter((candidate) => candidate !== mount.path && pathStartsWith('linux', mount.path, candidate))
      .sort((a, b) => b.length - a.length)[0];
    if (root === undefined) continue;
    const below = relativeSegments('linux', mount.path, root) ?? [];
    for (let depth = 1; depth < below.length; depth++) {
      const path = joinPath('linux', root, ...below.slice(0, depth));
      pins.set(path, { path, kind: 'write', pin: true });
    }
  }
  return [...pins.values()];
}

/** A pin is mounted where it is a real directory that a writable bind shows and a mounted mask lies below. */
function keepPin(pin: Mount, mounts: readonly Mount[], facts: PathFacts, inherited: string): boolean {
  if (inherited !== 'write') return false;
  const fact = factOf(facts, pin.path);
  if (fact.kind !== 'directory' || fact.linkText !== null) return false;
  // A git directory is pinned for itself (it must not be renamed away from its work tree).
  if (pin.surface) return true;
  return mounts.some(
    (mount) =>
      (mount.kind === 'deny' || mount.kind === 'read') &&
      pathStartsWith('linux', mount.path, pin.path) &&
      mount.path !== pin.path &&
      factOf(facts, mount.path).kind !== 'missing',
  );
}

function sortAncestorsFirst(mounts: Mount[]): Mount[] {
  // A path's ancestors are its prefixes, and a prefix always sorts first.
  return [...mounts].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function nearestEmittedAncestor(emitted: Mount[], path: string): Mount | undefined {
  let nearest: Mount | undefined;
  for (const mount of emitted) {
    if (mount.path !== path && pathStartsWith('linux', path, mount.path)) {
      if (!nearest || mount.path.length > nearest.path.length) nearest = mount;
    }
  }
  return nearest;
}

function hasGrantInside(mounts: Mount[], facts: PathFacts, dir: string): boolean {
  return mounts.some(
    (mount) =>
      (mount.kind === 'read' || mount.kind === 'write') &&
      mount.path !== dir &&
      pathStartsWith('linux', mount.path, dir) &&
      factOf(facts, mount.path).kind !== 'missing',
  );
}

function factOf(facts: PathFacts, path: string): PathFact {
  const fact = facts.paths.get(path);
  if (!fact) throw new FsError('internal_error', `bwrap argv builder has no path facts for ${path}`);
  return fact;
}

/** True when resolving the path crosses a symlink inside a writable root (one the sandbox could rewrite). */
function crossesRewritableSymlink(fact: PathFact, facts: PathFacts): boolean {
  return fact.symlinksCrossed.some((link) =>
    facts.writableRootRealPaths.some((root) => link !== root && pathStartsWith('linux', link, root)),
  );
}

/**
 * A mount decided by a symlink the sandboxed process can rewrite (one inside a writable root) would
 * be a snapshot: after the helper re-points the link, the denied or read-only path resolves to
 * something unmasked. Such a plan is refused rather than built.
 */
function refuseRewritableSymlink(
  path: string,
  fact: PathFact,
  facts: PathFacts,
  writableRoots: string[],
): void {
  for (const link of fact.symlinksCrossed) {
    const realRoot = facts.writableRootRealPaths.find(
      (root) => link !== root && pathStartsWith('linux', link, root),
    );
    if (realRoot === undefined) continue;
    const root = writableRoots.find((candidate) => pathStartsWith('linux', path, candidate)) ?? realRoot;
    throw new FsError(
      'permission_denied',
      `cannot build the sandbox: ${path} crosses the symlink ${link} inside writable root ${root}; ` +
        'the helper could re-point it and escape the mask',
    );
  }
}

/** The helper's own files under a denied path: running it would weaken that deny, so refuse loudly. */
function refuseRuntimeInsideDeny(plan: SandboxPlan, runtime: HelperRuntime): void {
  for (const file of runtimeFiles(runtime)) {
    const denied = plan.deniedPaths.find((path) => pathStartsWith('linux', file, path));
    if (denied !== undefined) {
      throw new FsError(
        'sandbox_unavailable',
        `the helper runtime ${file} lies inside the denied path ${denied}; the sandbox cannot start it`,
      );
    }
  }
}

/** The cwd when the sandbox shows it as a directory, else `/` (never a path the helper cannot see). */
function sandboxCwd(plan: SandboxPlan, rootReadable: boolean, facts: PathFacts, emitted: Mount[]): string {
  if (plan.cwd === null) return '/';
  validatePath(plan.cwd);
  if (factOf(facts, plan.cwd).kind !== 'directory') return '/';
  const exact = emitted.find((mount) => mount.path === plan.cwd);
  const deciding = exact ?? nearestEmittedAncestor(emitted, plan.cwd);
  if (deciding === undefined) return rootReadable ? plan.cwd : '/';
  return deciding.kind === 'read' || deciding.kind === 'write' ? plan.cwd : '/';
}

/**
 * Every path is passed as its own argv element (no shell, no splitting), and must be a plain
 * normalised absolute path: a NUL would truncate it, a newline could confuse log readers and
 * tools, `..` could move a mask, and non-UTF-8 bytes cannot cross Node's argv encoding intact.
 */
function validatePath(path: string): void {
  const problem = path.includes('\0')
    ? 'contains NUL'
    : path.includes('\n')
      ? 'contains a newline'
      : hasLoneSurrogate(path)
        ? 'is not valid UTF-8'
        : normalizeNativePath('linux', path) !== path
          ? 'is not a normalised absolute path'
          : null;
  if (problem !== null) {
    throw new FsError('invalid_params', `cannot build the sandbox: path ${JSON.stringify(path)} ${problem}`);
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function validEnvName(name: string): string {
  if (!ENV_NAME.test(name))
    throw new FsError(
      'invalid_params',
      `cannot build the sandbox: bad environment name ${JSON.stringify(name)}`,
    );
  return name;
}

function validEnvValue(name: string, value: string): string {
  if (value.includes('\0'))
    throw new FsError('invalid_params', `cannot build the sandbox: environment ${name} contains NUL`);
  return value;
}
