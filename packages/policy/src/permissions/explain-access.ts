import type { HostOs } from '../host-os.js';
import type { WireResultOf } from '../method-table.js';
import { decideWrite, isDeniedPath, type PathGuard } from '../path-guard.js';
import type { PermissionProfile } from '../schemas/sandbox-context.js';
import { type HelperRuntimeReads, runtimeReadOf } from '../widening.js';
import { accessFor, checkAccess } from './access.js';

export type AccessExplanation = WireResultOf<'fs/explainAccess'>;

/** What the host says about a path at the moment it is explained (the broker reads it). */
export interface PhysicalFacts {
  /** The guard the sandbox for this context would be built with. */
  guard: PathGuard;
  /** The path with every symlink resolved (through its longest existing prefix). */
  resolved: string;
  /** Where a write would land: the parent resolved, the last name not followed. */
  writeTarget: string;
  /** An existing symlink at the path itself (a sandboxed write never follows one). */
  isSymlink: boolean;
  /**
   * Why the executable surface refuses a write at `writeTarget` on what the files there are
   * (surface-judge.ts: a git directory whatever its name, a hooks directory, a layout completed),
   * or null.
   */
  surfaceRefusal: string | null;
  /** What every sandbox shows its program to start (widening.ts runtimeReadPaths' inputs). */
  runtime: HelperRuntimeReads;
}

/**
 * The access a sandboxed request gets to `path`, judged as enforcement judges it: the profile's
 * entries on the path as spelled (the pre-check), then the guard on its physical location (what the
 * helper checks where it acts), so a symlink into a denied or read-only place, a protected name or
 * fs-sandbox's own code are explained as what they are. `write` implies `read`.
 */
export function explainAccess(
  profile: PermissionProfile,
  path: string,
  os: HostOs,
  physical: PhysicalFacts,
): AccessExplanation {
  const { entry } = accessFor(profile, path, os);
  const decided = entry === null ? {} : { entry };
  // Readable by the policy, or by what every sandbox shows so that a program can start: the
  // kernel lets a command read both, so both are reported (the second naming that rule).
  const readRule = (
    target: string,
  ): { allowed: true; runtime: string | null } | { allowed: false; rule: string } => {
    const read = checkAccess(profile, target, 'read', os);
    if (read.allowed) return { allowed: true, runtime: null };
    const runtime = runtimeReadOf(profile, target, physical.runtime);
    return runtime === null ? { allowed: false, rule: read.rule } : { allowed: true, runtime };
  };
  const read = readRule(path);
  if (!read.allowed) return { access: 'none', reason: read.rule, ...decided };
  const resolvedNote = physical.resolved === path ? '' : ` (it is ${physical.resolved})`;
  if (isDeniedPath(physical.guard, physical.resolved, os)) {
    return { access: 'none', reason: `it leads to a denied path${resolvedNote}`, ...decided };
  }
  let runtime = read.runtime;
  if (physical.resolved !== path) {
    const real = readRule(physical.resolved);
    if (!real.allowed) return { access: 'none', reason: `${real.rule}${resolvedNote}`, ...decided };
    runtime ??= real.runtime;
  }
  if (runtime !== null) {
    return {
      access: 'read',
      reason: `no policy entry grants it, but every sandbox shows ${runtime} read-only so that a program can start (the runtime's own reads)${resolvedNote}`,
    };
  }
  const write = checkAccess(profile, path, 'write', os, physical.guard.surface.entries);
  if (!write.allowed) {
    return {
      access: 'read',
      reason: write.rule,
      ...decided,
      ...(write.kind === 'protected_path' ? { protected: true as const } : {}),
    };
  }
  if (physical.isSymlink) {
    return {
      access: 'read',
      reason: 'it is a symbolic link, and a sandboxed write never follows a link at the written name',
      ...decided,
    };
  }
  const guarded = decideWrite(physical.guard, physical.writeTarget, os);
  if (!guarded.allowed) {
    const where = physical.writeTarget === path ? '' : ` (it is ${physical.writeTarget})`;
    return {
      access: 'read',
      reason: `${guarded.rule}${where}`,
      ...decided,
      ...(guarded.kind === 'protected_path' ? { protected: true as const } : {}),
    };
  }
  if (physical.surfaceRefusal !== null) {
    return { access: 'read', reason: physical.surfaceRefusal, ...decided, protected: true as const };
  }
  return { access: 'write', reason: 'a writable root holds it and no narrower rule denies it', ...decided };
}
