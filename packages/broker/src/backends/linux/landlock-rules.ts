import type { SandboxPlan } from '@fs-sandbox/policy';
import {
  FsError,
  hasLoneSurrogate,
  joinPath,
  LANDLOCK_FS,
  LANDLOCK_READ,
  LANDLOCK_WRITE,
  pathStartsWith,
  relativeSegments,
} from '@fs-sandbox/policy/core';

/**
 * Pure translation of a SandboxPlan into Landlock rules (a path and the rights granted beneath
 * it). Landlock only adds: a rule on a directory grants its rights to everything below it, and
 * nothing can take them back deeper down. So a path that must get less than the tree around it (a
 * denied path, a read-only entry inside a writable root, a command's `.git`) is carved out: the
 * tree's directory gets only the rights the narrower path may have too, and every *sibling* on the
 * way down gets the full rights by a rule of its own.
 *
 * The cost, said plainly: the rules are bound to the objects that exist when the sandbox starts. In
 * a directory that was carved (one holding a narrower path, or lying on the way to one), an entry
 * created later by anyone has no rule and is out of reach for the whole run, and for a command the
 * directory itself cannot get a new entry from inside (no file may be made, removed or renamed
 * directly in it; the helper may beside a denied path, GUARDED_BY_HELPER, but cannot read back
 * what it made there).
 * Everything below an existing sibling behaves as a plain root.
 *
 * Paths are compared by their real location: Landlock judges the object a path reaches, whatever
 * it was called, so a deny spelled through a symlink is carved where the object really lies.
 */

export interface LandlockRule {
  /** Real path of an existing file or directory, no symlink in it. */
  path: string;
  /** LANDLOCK_ACCESS_FS_* granted beneath it (the launcher keeps the file rights for a file). */
  mask: number;
}

/** What the builder asks of the host; the backend answers from the disk at prepare time. */
export interface LandlockHostView {
  /** The real path, or null when the path does not exist. */
  real(path: string): string | null;
  isDirectory(real: string): boolean;
  /** Names in a real directory, with whether each is a symlink (which gets no rule of its own). */
  children(real: string): Array<{ name: string; symlink: boolean }>;
}

const DEV = '/dev';
/** Devices a program may use: the same set bwrap's `--dev` makes, less the terminals. */
const DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom'];
const DEVICE_MASK = LANDLOCK_FS.readFile | LANDLOCK_FS.writeFile;

/**
 * Rights a directory above a narrower *file* may keep: they act on directories only (listing one
 * shows the file's name, as bwrap's mask does) and cannot reach the file's content or replace it.
 */
const SAFE_ABOVE_FILE = LANDLOCK_FS.readDir | LANDLOCK_FS.makeDir;

/**
 * Rights a directory above a *denied* path keeps for the helper besides those: every write (make,
 * remove, rename, write, truncate). The helper judges each path it creates, replaces, renames onto
 * or removes by its physical location against every denied path under its real name (decideWrite),
 * as it does for the top-level `.git`, so the kernel need not refuse those; without them no file
 * could be written in a workspace root holding a denied `.env` (an atomic write makes its staging
 * file beside the target). Reading a denied path's content, listing a denied directory and
 * executing stay refused by Landlock. A read-only path is not relaxed: one reached through another
 * spelling of a writable root (a readable root `alias/x` with `alias` -> the root) is no read-only
 * entry of that root to the guard, only Landlock's real-location rules hold it. A command has no
 * guard: its directories keep only what the narrower path may have.
 */
const GUARDED_BY_HELPER = LANDLOCK_WRITE & ~LANDLOCK_READ;

/** Rules beyond this are refused: each is a descriptor and a kernel object for the whole run. */
export const LANDLOCK_MAX_RULES = 4096;

/** Strictness when two entries name one object: a deny beats a read, a read beats a write. */
type RuleEntryKind = 'write' | 'read' | 'deny';
const STRICTNESS: Record<RuleEntryKind, number> = { write: 0, read: 1, deny: 2 };
const MASK: Record<RuleEntryKind, number> = {
  write: LANDLOCK_WRITE | LANDLOCK_READ,
  read: LANDLOCK_READ,
  deny: 0,
};

interface Entry {
  real: string;
  kind: RuleEntryKind;
  mask: number;
  directory: boolean;
}

export interface LandlockRuleSet {
  rules: LandlockRule[];
  /** The plan's cwd where the sandbox shows it, else `/`. */
  cwd: string;
}

export function buildLandlockRules(
  plan: SandboxPlan,
  runtimeFiles: readonly string[],
  denyGlobMatches: readonly string[],
  host: LandlockHostView,
  options: { command: boolean },
): LandlockRuleSet {
  const named: Array<{ path: string; kind: RuleEntryKind }> = [];
  const roots = plan.fullDiskRead ? ['/'] : plan.readableRoots;
  for (const path of roots) named.push({ path, kind: 'read' });
  for (const path of runtimeFiles) named.push({ path, kind: 'read' });
  named.push({ path: '/proc', kind: 'read' });
  // The host's /dev holds its disks and terminals, which a uid (root's above all) may open: it is
  // closed whatever else grants it, and only the safe devices below are opened again.
  named.push({ path: DEV, kind: 'deny' });
  for (const writable of plan.writableRoots) {
    named.push({ path: writable.root, kind: 'write' });
    for (const path of writable.readOnlySubpaths) named.push({ path, kind: 'read' });
    // The helper's guard checks the executable surface at every depth when it acts (as it does
    // under bwrap below the root's top level); a command has no guard, so the top-level names
    // the plan protects are carved read-only for it, as bwrap binds them read-only.
    if (options.command) {
      for (const name of writable.protectedNames)
        named.push({ path: joinPath('linux', writable.root, name), kind: 'read' });
      // The surface the command's scan found at every depth (runner/command-surface.ts): config,
      // hooks and the rest of each git directory that is not repository data, carved read-only.
      for (const path of writable.commandSurface?.readOnly ?? []) named.push({ path, kind: 'read' });
    }
  }
  for (const path of plan.unshownReadOnlyPaths ?? []) named.push({ path, kind: 'read' });
  for (const path of [...plan.deniedPaths, ...(plan.unshownDeniedPaths ?? []), ...denyGlobMatches])
    named.push({ path, kind: 'deny' });

  const entries = new Map<string, Entry>();
  for (const { path, kind } of named) {
    const real = host.real(path);
    // A missing path gets no rule: nothing exists to grant, and a missing deny is refused by the
    // pre-check (bwrap does not mask one either).
    if (real === null) continue;
    validate(real);
    const known = entries.get(real);
    if (known !== undefined && STRICTNESS[known.kind] >= STRICTNESS[kind]) continue;
    entries.set(real, { real, kind, mask: MASK[kind], directory: host.isDirectory(real) });
  }

  const rules: LandlockRule[] = [];
  const emit = (path: string, mask: number): void => {
    if (mask === 0) return;
    validate(path);
    rules.push({ path, mask });
    if (rules.length > LANDLOCK_MAX_RULES)
      throw new FsError(
        'sandbox_unavailable',
        `the Landlock sandbox needs more than ${LANDLOCK_MAX_RULES} rules (a denied or read-only path in a directory with that many siblings); refused rather than granting the directory`,
        { kind: 'sandboxPreparation' },
      );
  };
  const all = [...entries.values()];
  for (const entry of all) {
    if (entry.mask === 0) continue;
    const narrower = all.filter(
      (other) =>
        other.real !== entry.real &&
        pathStartsWith('linux', other.real, entry.real) &&
        (entry.mask & ~conflictMask(other, options)) !== 0,
    );
    if (narrower.length === 0) {
      emit(entry.real, entry.mask);
      continue;
    }
    // On the tree itself (so on every directory on the way down): what each narrower path allows.
    emit(
      entry.real,
      narrower.reduce((mask, other) => mask & conflictMask(other, options), entry.mask),
    );
    carve(
      entry.real,
      entry.mask,
      narrower.map((other) => other.real),
      host,
      emit,
    );
  }
  for (const device of DEVICES) if (host.real(device) === device) emit(device, DEVICE_MASK);
  return { rules, cwd: cwdOf(plan, entries, host) };
}

/** What the directories above `entry` may grant without reaching into it. */
function conflictMask(entry: Entry, options: { command: boolean }): number {
  // Listing /dev shows device names only; no right on it opens one.
  if (entry.real === DEV) return LANDLOCK_FS.readDir;
  const own = entry.directory ? entry.mask : entry.mask | SAFE_ABOVE_FILE;
  return options.command || entry.kind !== 'deny' ? own : own | GUARDED_BY_HELPER;
}

/** Grants `mask` to every sibling on the way from `dir` down to each target, and not to the way itself. */
function carve(
  dir: string,
  mask: number,
  targets: string[],
  host: LandlockHostView,
  emit: (path: string, mask: number) => void,
): void {
  // The child of `dir` each target lies in (a target directly in `dir` ends the way there).
  const ways = new Map<string, string[]>();
  for (const target of targets) {
    const below = relativeSegments('linux', target, dir);
    if (below === null || below.length === 0) continue;
    const child = below[0] as string;
    const deeper = ways.get(child) ?? [];
    if (below.length > 1) deeper.push(target);
    ways.set(child, deeper);
  }
  for (const { name, symlink } of host.children(dir)) {
    const path = joinPath('linux', dir, name);
    const way = ways.get(name);
    // A symlink's target is judged where it lies, by its own rules: a rule here would grant nothing.
    if (way === undefined) {
      if (!symlink) emit(path, mask);
    } else if (way.length > 0 && host.isDirectory(path)) carve(path, mask, way, host, emit);
  }
}

function cwdOf(plan: SandboxPlan, entries: Map<string, Entry>, host: LandlockHostView): string {
  if (plan.cwd === null) return '/';
  const real = host.real(plan.cwd);
  if (real === null || !host.isDirectory(real)) return '/';
  let nearest: Entry | undefined;
  for (const entry of entries.values())
    if (pathStartsWith('linux', real, entry.real) && (!nearest || entry.real.length > nearest.real.length))
      nearest = entry;
  return nearest !== undefined && nearest.mask !== 0 ? plan.cwd : '/';
}

/** Every path reaches the launcher as one argv element: no NUL, no newline, valid UTF-8. */
function validate(path: string): void {
  if (path.includes('\0') || path.includes('\n') || hasLoneSurrogate(path))
    throw new FsError(
      'invalid_params',
      `cannot build the Landlock sandbox: path ${JSON.stringify(path)} cannot be passed to it`,
    );
}
