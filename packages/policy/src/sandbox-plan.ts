import type { HostOs } from './host-os.js';
import type { SurfaceEntry } from './permissions/executable-surface.js';

/**
 * The platform-neutral result of resolving a sandbox context: what the helper may read and write,
 * with every path already native and absolute. Backends (bwrap, Seatbelt, restricted token) turn
 * exactly this into a platform command; nothing else about the policy reaches them.
 */
export interface SandboxPlan {
  os: HostOs;
  /** `root:read` with no deny entry: the base layer is the whole filesystem, read-only. */
  fullDiskRead: boolean;
  /** Readable roots (directories or exact files) when `fullDiskRead` is false; includes the platform minimal roots and the helper's runtime files. Sorted, deduplicated, none inside another. */
  readableRoots: string[];
  /** Writable roots with what must stay read-only inside them. Sorted by path. */
  writableRoots: WritableRoot[];
  /** Paths denied outright (deny entries), native and absolute. The backend masks them. */
  deniedPaths: string[];
  /**
   * Deny entries that nothing grants by name (left out of `deniedPaths`). Through a symlink the same
   * object may still be shown under a granted root's name; a backend that resolves paths on disk
   * (bwrap) masks it there. Absent or empty when there are none.
   */
  unshownDeniedPaths?: string[];
  /**
   * Read entries outside every writable root by name that the plan otherwise drops (redundant
   * under a read grant or full-disk read). Through a symlink the same object may lie inside a
   * writable root under its real name; a backend that resolves paths on disk (bwrap) re-binds it
   * read-only there. Absent when there are none.
   */
  unshownReadOnlyPaths?: string[];
  /** Deny-only glob patterns, absolute (relative ones resolved against cwd). */
  denyGlobs: string[];
  /** The sandbox cwd (native), when the context has one. */
  cwd: string | null;
  /**
   * The executable surface protected at any depth below every writable root (the guard carries
   * it). Absent means the fixed entries alone (EXECUTABLE_SURFACE).
   */
  surface?: SurfaceEntry[];
  /** Directories in or below which a command may leave a new git repository. Absent: none. */
  nestedRepositories?: string[];
  /**
   * The sandboxed program may use the network: set only for a command whose context's network is
   * `enabled`, never for the helper. Absent means no network.
   */
  network?: boolean;
  /**
   * The sandboxed program is a command, not the helper: a backend that leaves the executable
   * surface to the helper's guard (Landlock) must enforce it itself. Absent: the helper.
   */
  command?: boolean;
  /**
   * A command whose launch hands the broker a channel at descriptor 3 (its network set-up step,
   * the broker's network/sandbox-listeners.ts): the sandbox program's own inputs follow it.
   */
  launchChannel?: boolean;
}

export interface WritableRoot {
  root: string;
  /** Read-only entries nested inside this root (deepest-wins read entries), native and absolute. */
  readOnlySubpaths: string[];
  /**
   * The executable surface's entries (`.git`, `.agents`, `.codex`, the policy's; relative paths) as
   * they stand directly under this root: backends keep the existing ones read-only there (the
   * helper's guard protects them at every depth). Empty when the root itself lies inside one
   * (explicit grant).
   */
  protectedNames: string[];
  /**
   * Set for a command's launch (the broker's runner/command-surface.ts scanned the root): the
   * executable surface as it stands at any depth. A backend binds `readOnly` read-only and each
   * `pinned` git directory onto itself, and then binds none of `protectedNames` whole: a command's
   * git may write a repository's data, never what steers or runs code.
   */
  commandSurface?: { readOnly: string[]; pinned: string[] };
}
