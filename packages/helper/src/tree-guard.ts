import {
  assertWritable,
  FsError,
  globMatching,
  guardedInside,
  type HostOs,
  type PathGuard,
  pathStartsWith,
  surfaceDecisionAtLeaf,
  writableRootOf,
} from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';

/** What must be checked for the entries of one directory of a tree operation. */
export interface GuardScope {
  /** Guard entries or sandbox mount points lie below the directory: decide each entry in full. */
  entries: boolean;
  /** Only the deny globs can refuse an entry here (each entry's own path is matched). */
  globs: boolean;
}

/**
 * The guard as a tree operation asks it, once per entry: may this physical path be created or
 * removed? Most directories hold nothing guarded below them, and then nothing below them can
 * hold anything guarded either, so the full decision is only made where it can differ (deciding
 * every entry of a 100 000-file tree against every rule, through every ancestor, would cost
 * seconds). Mount points of the sandbox (masks, read-only binds, other roots) count as guarded.
 */
export class TreeGuard {
  private readonly mounts: string[];
  /** The writable root holding the tree: the executable surface's names are matched below it for every entry. */
  private readonly writableRoot: string | null;

  constructor(
    private readonly guard: PathGuard | null,
    private readonly os: HostOs,
    root: string,
    mountPoints: ReadonlySet<string> | null,
  ) {
    this.mounts = [...(mountPoints ?? [])].filter(
      (mount) => mount !== root && pathStartsWith(os, mount, root),
    );
    this.writableRoot = guard === null ? null : writableRootOf(guard, root, os);
  }

  /** The scope of the physical directory `directory`, inside a directory of scope `parent` (none for the root). */
  scope(directory: string, parent: GuardScope | null): GuardScope {
    const globs = this.guard !== null && this.guard.denyGlobs.length > 0;
    if (parent !== null && !parent.entries) return { entries: false, globs };
    const entries =
      (this.guard !== null && guardedInside(this.guard, directory, this.os).length > 0) ||
      this.mounts.some((mount) => mount !== directory && pathStartsWith(this.os, mount, directory));
    return { entries, globs };
  }

  /** Throws when the entry at `physical` (spelled `display`) must not be created or removed. */
  check(physical: string, display: string, verb: 'create' | 'remove', scope: GuardScope): void {
    if (scope.entries) {
      if (this.mounts.includes(physical)) {
        throw new FsError(
          'permission_denied',
          `cannot ${verb} ${displayPath(display)}: it is a mount point of the sandbox (a denied, read-only or protected path, or another writable root)`,
        );
      }
      if (this.guard !== null) assertWritable(this.guard, physical, displayPath(display), this.os);
      return;
    }
    const glob = scope.globs && this.guard !== null ? globMatching(this.guard, physical, this.os) : null;
    if (glob !== null) {
      throw new FsError(
        'permission_denied',
        `cannot ${verb} ${displayPath(display)}: denied by glob ${glob.pattern}`,
      );
    }
    // The executable surface's names hold at any depth, where no entry of the guard lies (the
    // entry's ancestors were checked as the walk entered them, so its own name is what is new).
    const surface =
      this.guard === null || this.writableRoot === null
        ? null
        : surfaceDecisionAtLeaf(this.guard, this.writableRoot, physical, this.os);
    if (surface !== null && !surface.allowed) {
      throw new FsError(surface.kind, `cannot ${verb} ${displayPath(display)}: ${surface.rule}`);
    }
  }
}
