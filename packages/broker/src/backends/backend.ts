import type { HostOs, SandboxPlan } from '@fs-sandbox/policy';

/** What every backend needs besides the plan: the exact runtime files and the already-filtered environment. */
export interface HelperRuntime {
  /** Real path of the node executable (symlinks resolved). */
  nodePath: string;
  /** Absolute path of the bundled helper program. */
  helperBundle: string;
  /** Environment after the allowlist filter (DESIGN §5); backends never add host variables. */
  env: Record<string, string>;
}

/**
 * A launch the runner can spawn: a program, its argv and environment, and the cwd of the launcher
 * itself (the sandboxed helper's cwd is set by the backend inside the sandbox).
 */
export interface LaunchSpec {
  backend: BackendName;
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Extra description for `fs-sandbox explain` (e.g. the Seatbelt profile text, the Windows token plan). */
  details?: Record<string, unknown>;
  /**
   * Host paths the launch binds into the sandbox as they were when it was prepared. A helper started
   * earlier (warm pool) must be shown their device/inode at request time and refuse if its own view
   * differs. Absent when the backend binds nothing (its sandbox re-resolves paths on every access).
   */
  freshnessRoots?: string[];
  /** Existing paths the backend masked because a deny glob matched them (their identities are denied too). */
  denyGlobMatches?: string[];
}

export type BackendName = 'bwrap' | 'seatbelt' | 'restricted-token';

/**
 * A platform backend: turns a plan into the command that runs the helper under that plan on one OS.
 * `prepare` may read the filesystem (existence, symlinks) and may refuse with a typed FsError
 * (`sandbox_unavailable`, `permission_denied`); it never falls back to an unsandboxed launch.
 */
export interface SandboxBackend {
  readonly name: BackendName;
  readonly os: HostOs;
  prepare(plan: SandboxPlan, runtime: HelperRuntime): Promise<LaunchSpec>;
}
