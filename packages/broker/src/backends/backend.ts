import type { HostOs, SandboxBackendName, SandboxPlan } from '@fs-sandbox/policy';
import type { NetworkLaunch } from '../network/sandbox-listeners.js';

/** The JavaScript runtime that executes the helper: node with the bundle, or the compiled Bun helper. */
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
  /**
   * Real path of the ripgrep executable fs/search and fs/glob run inside the sandbox, or null when
   * this platform's `@vscode/ripgrep` binary is not installed (those methods then fail with
   * `sandbox_unavailable`; nothing else needs it).
   */
  ripgrepPath: string | null;
  /** Environment after the allowlist filter; backends never add host variables. */
  env: Record<string, string>;
}

/**
 * The script node is given, or null for the compiled Bun helper, whose executable is the program.
 * Bun needs no flags either: what the hardened helper must not read is compiled in (the helper's
 * build: scripts/bun-compile.mjs at the repository root).
 */
export function helperScript(runtime: HelperRuntime): string | null {
  return runtime.executable.kind === 'bun' ? null : runtime.helperBundle;
}

/**
 * node loads its OpenSSL configuration (OPENSSLDIR/openssl.cnf) while starting and exits when that
 * file exists but cannot be read, as under Seatbelt or Landlock, which judge the host's own paths.
 * The helper needs no OpenSSL configuration, so it reads an empty one (/dev/null, which both
 * allow) instead of a path the sandbox would have to expose.
 */
export const NODE_EMPTY_OPENSSL_CONFIG: readonly string[] = ['--openssl-config=/dev/null'];

/**
 * The exact files every sandbox lets the helper read (and node and ripgrep execute), in launch
 * order: warm spares start before their method is known, so ripgrep is in every launch.
 */
export function runtimeFiles(runtime: HelperRuntime): string[] {
  const files = [runtime.executable.path, runtime.helperBundle];
  if (runtime.ripgrepPath !== null) files.push(runtime.ripgrepPath);
  return files;
}

/**
 * What a launch's sandbox program reads while it sets up, on descriptors numbered from
 * FIRST_LAUNCH_INPUT_FD in this order: the seccomp filter (bwrap's `--seccomp 3`), then
 * `emptyInputs` descriptors that give no bytes (each the content of a file bwrap makes and binds
 * read-only, `--ro-bind-data`). The spawner opens them there; the argv already names the numbers.
 */
export interface LaunchInputs {
  /**
   * The descriptor of the first input: FIRST_LAUNCH_INPUT_FD, or one above it where a command's
   * channel to the broker takes that one (SandboxPlan `launchChannel`).
   */
  firstFd: number;
  /**
   * The filter program as the kernel loads it (classic BPF), base64-encoded (a launch is shared
   * frozen, and bytes cannot be frozen), or null for none.
   */
  seccomp: string | null;
  emptyInputs: number;
}

/** Descriptor of the first launch input (right after stdin, stdout, stderr). */
export const FIRST_LAUNCH_INPUT_FD = 3;

/** The descriptor a command's launch hands the broker its channel on, when it has one (before the inputs). */
export const LAUNCH_CHANNEL_FD = FIRST_LAUNCH_INPUT_FD;

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
  /** The runtime executable (node, or the compiled Bun helper), as the sandbox names it. */
  runtime: string;
  /** Which runtime that is: a warm spare's extra flags depend on it. */
  runtimeKind: RuntimeKind;
  /** The runtime's own flags, before the helper bundle (a spare's node flags). */
  runtimeArgs: string[];
  /** The helper bundle the runtime runs, as the sandbox names it; null when the runtime is the helper. */
  helper: string | null;
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
  /** Where the sandboxed program starts, when the backend sets it (bwrap's `--chdir`). */
  cwd?: string;
  /** Extra description for `fs-sandbox explain` (e.g. the Seatbelt profile text, the Windows token plan). */
  details?: Record<string, unknown>;
  /** Existing paths the backend masked because a deny glob matched them (their identities are denied too). */
  denyGlobMatches?: string[];
  /** Descriptors the sandbox program reads at set-up; absent: none. */
  inputs?: LaunchInputs;
  /** Why this backend runs it, where there was a choice (Linux: bwrap or Landlock), for `explain`. */
  reason?: string;
}

/**
 * A command's launch (process/start): the sandbox program and its arguments as a backend built them
 * for the helper, followed by the user's argv instead of node and the helper. `sandboxProgram` is
 * null when the context grants everything and the command runs unsandboxed, as the reference runs
 * it. `env` is the environment of the spawned program: for a sandboxed command that is the sandbox
 * builder, which gets the allowlist only (the command's own environment is set inside the sandbox).
 */
export interface CommandLaunchSpec {
  backend: BackendName | null;
  sandboxProgram: string | null;
  sandboxArgs: string[];
  argv: string[];
  env: Record<string, string>;
  /** The spawned program's cwd: the command's own for an unsandboxed run, `/` under a sandbox. */
  cwd: string;
  /** Descriptors the sandbox program reads at set-up; absent: none. */
  inputs?: LaunchInputs;
  /**
   * Present when the command's way out is through the broker (an allowlist proxy, or managed
   * networking): `argv` then starts with the set-up step that hands the broker its listening
   * sockets, and the spawn must give it the channel (see network/sandbox-listeners.ts).
   */
  network?: NetworkLaunch;
  /**
   * The command's cgroup, made when it starts and removed when it has ended (runner/process-bound.ts;
   * an RLIMIT_NPROC bound is in `argv` already); absent: none.
   */
  cgroup?: { parent: string; maxProcesses: number };
  /**
   * Run once the command has exited, before its exit is reported: removes what it left that the
   * executable surface refuses (runner/command-surface.ts) and returns one line per removal, which
   * the command's stderr carries. Absent: nothing to sweep (an unsandboxed command).
   */
  sweep?: () => string[];
}

export type BackendName = SandboxBackendName;

/**
 * A platform backend: turns a plan into the launch that runs the helper under that plan on one OS.
 * `prepare` may read the filesystem (existence, symlinks) and may refuse with a typed FsError
 * (`sandbox_unavailable`, `permission_denied`); it never falls back to an unsandboxed launch.
 */
export interface SandboxBackend {
  readonly name: BackendName;
  readonly os: HostOs;
  /**
   * True when every host read of prepare() goes through runner/host-reads.ts, so a launch it built
   * may be reused for as long as those reads, asked again, get the same answers.
   */
  readonly witnessesHostReads?: boolean;
  prepare(plan: SandboxPlan, runtime: HelperRuntime): Promise<LaunchSpec>;
}
