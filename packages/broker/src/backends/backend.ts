import type { HostOs, SandboxPlan } from '@fs-sandbox/policy';

/** The JavaScript runtime that executes the helper bundle. */
export type RuntimeKind = 'node' | 'bun';

/** The runtime executable: which runtime it is (its flags differ) and its real path (symlinks resolved). */
export interface RuntimeExecutable {
  kind: RuntimeKind;
  path: string;
}

/** What every backend needs besides the plan: the exact runtime files and the already-filtered environment. */
export interface HelperRuntime {
  /** The executable that runs the helper bundle. */
  executable: RuntimeExecutable;
  /** Absolute path of the bundled helper program. */
  helperBundle: string;
  /** Environment after the allowlist filter; backends never add host variables. */
  env: Record<string, string>;
}

/**
 * A launch the runner can spawn, kept in its parts: the program that builds the sandbox, then node
 * and the helper inside it. The parts stay apart so that the pool can give a warm spare its own
 * node and helper flags, and learn what was mounted, without reading an argv back; launch-command.ts
 * is the one place they are joined. The launcher itself runs with cwd `/` (the sandboxed helper's
 * cwd is set by the backend inside the sandbox).
 */
export interface LaunchSpec {
  backend: BackendName;
  /** The program spawned: bwrap, sandbox-exec, or node running the Windows launcher. */
  sandboxProgram: string;
  /** Its arguments, up to where the runtime's command line starts. */
  sandboxArgs: string[];
  /** The runtime executable (node or Bun), as the sandbox names it. */
  runtime: string;
  /** Which runtime that is: a warm spare's extra flags depend on it. */
  runtimeKind: RuntimeKind;
  /** The runtime's own flags, before the helper bundle (Bun's hardening flags, a spare's node flags). */
  runtimeArgs: string[];
  /** The helper bundle the runtime runs, as the sandbox names it. */
  helper: string;
  /** The helper program's own arguments, after `--expect-mounts` (which is derived from mountPoints). */
  helperArgs: string[];
  /**
   * Every host-dependent mount point (binds, masks), in the order they are mounted. A helper started
   * earlier (warm pool) must find them all still mounted before acting, else the host detached one
   * under it. Empty when the backend binds nothing (its sandbox re-resolves paths on every access).
   */
  mountPoints: string[];
  /**
   * Host paths the launch binds into the sandbox as roots, as they were when it was prepared. A warm
   * helper is shown their device/inode at request time and refuses if its own view differs.
   */
  boundRoots: string[];
  env: Record<string, string>;
  /** Extra description for `fs-sandbox explain` (e.g. the Seatbelt profile text, the Windows token plan). */
  details?: Record<string, unknown>;
  /** Existing paths the backend masked because a deny glob matched them (their identities are denied too). */
  denyGlobMatches?: string[];
}

export type BackendName = 'bwrap' | 'seatbelt' | 'restricted-token';

/**
 * A platform backend: turns a plan into the launch that runs the helper under that plan on one OS.
 * `prepare` may read the filesystem (existence, symlinks) and may refuse with a typed FsError
 * (`sandbox_unavailable`, `permission_denied`); it never falls back to an unsandboxed launch.
 */
export interface SandboxBackend {
  readonly name: BackendName;
  readonly os: HostOs;
  prepare(plan: SandboxPlan, runtime: HelperRuntime): Promise<LaunchSpec>;
}
