import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import {
  buildSandboxPlan,
  type CommandNetwork,
  deepFreeze,
  FsError,
  type HelperRuntimeReads,
  type HostOs,
  type PathGuard,
  type SandboxedContext,
  type SandboxPlan,
  widenForHelperRuntime,
} from '@fs-sandbox/policy';
import {
  type BackendName,
  type CommandLaunchSpec,
  type LaunchSpec,
  runtimeFiles,
  type SandboxBackend,
} from '../backends/backend.js';
import { commandNetworkLaunch, type LauncherPrograms } from '../network/command-network-launch.js';
import { resolveUnixSocketRelays } from '../network/unix-relay.js';
import { assertCwdShown, assertProgramShown } from './command-program.js';
import { prepareCommandSurface } from './command-surface.js';
import { type ResolvedHelperRuntime, runsRipgrep } from './helper-runtime.js';
import { type HostJournal, journaled } from './host-reads.js';
import { buildPathGuard, type HostProtections, protectHostPaths } from './path-guard.js';
import {
  DEFAULT_MAX_PROCESSES,
  type ProcessBoundMechanism,
  processBoundFor,
  processBoundMechanism,
} from './process-bound.js';
import type { HelperLauncher, RunHelperOptions } from './spawn-helper.js';
import { newTempTag, removeTempsRequest, tempScopesOf } from './temp-cleanup.js';

/** How long the clean-up after a killed helper may take (it lists one directory or one copied tree). */
const TEMP_CLEANUP_TIMEOUT_MS = 10_000;

/** Distinct contexts whose plans are kept (an agent uses a handful). */
const PLAN_CACHE_ENTRIES = 64;

/**
 * A launch built from more host reads than these (a deny glob scanning thousands of entries, long
 * names) is rebuilt every time instead of kept: with every cached context holding its reads, they
 * bound the memory of reuse to ~64 × 128 KiB of questions and answers. A plain context needs ~40
 * reads and ~3 KiB.
 */
const REUSABLE_LAUNCH_MAX_READS = 1024;
const REUSABLE_LAUNCH_MAX_BYTES = 128 * 1024;

export interface SandboxRunnerDeps {
  os: HostOs;
  /**
   * Tasks one command's sandbox may hold (process-bound.ts), or null for no bound; with the
   * mechanism this machine offers for it (detected once when absent).
   */
  maxProcesses?: number | null;
  processBound?: () => ProcessBoundMechanism;
  /** The platform backend for a context; throws `sandbox_unavailable` when there is none. */
  backendFor(context: SandboxedContext): SandboxBackend | Promise<SandboxBackend>;
  runtime(): Promise<ResolvedHelperRuntime>;
  launcher: HelperLauncher;
  /**
   * The extra read-only paths the host calls for (default: read from this host now, see
   * path-guard.ts). Another OS's files cannot be read from here, so `fs-sandbox explain --platform`
   * passes what it assumes instead.
   */
  protectHostPaths?: typeof protectHostPaths;
  /** Where the network set-up step's shell and node are (default: found on this host). */
  launcherPrograms?: LauncherPrograms;
}

export interface PreparedLaunch {
  plan: SandboxPlan;
  launch: LaunchSpec;
  /** Why the launch's runtime (node or Bun) runs the helper, for `explain` (absent in test doubles). */
  runtimeReason?: string;
}

export interface PreparedSandbox extends PreparedLaunch {
  guard: PathGuard;
}

/** What a command needs from its request to be launched: argv, native cwd, its final environment. */
export interface SandboxCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** A pseudo-terminal of this size for the command, allocated inside the sandbox. */
  terminal?: { rows: number; cols: number } | null;
  /** Its network, decided from the context and the request (policy's command-network.ts). */
  network: CommandNetwork;
  /**
   * Files named by the broker's own CA bundle variables that the command gets (they pass through
   * when it has a network): readable in its sandbox, where no deny entry says otherwise.
   */
  caFiles: string[];
}

export interface SandboxRun {
  reply: HelperReply;
  backend: BackendName;
}

/**
 * Runs one helper request under the platform sandbox: the context's policy widened by exactly what
 * the helper needs to start, turned into a plan, then into the backend's command.
 */
export class SandboxRunner {
  /**
   * Plans by context: building one resolves every entry's access again (about 0.7 ms), and an agent
   * sends the same context with every call. The plan is a pure function of the context and the
   * runtime, so reusing it is exact; what the host adds to it is checked per request (`prepared`).
   */
  private readonly plans = new Map<string, SandboxPlan>();

  /**
   * The prepared sandbox of each cached plan, with the host reads it was built from (host-reads.ts).
   * A request reuses it when every one of those reads, asked again, gets the same answer: the
   * rebuild would then produce this very launch and guard, so the ~2 ms of building them (more
   * than a warm helper's whole answer) are saved without reusing anything the host has changed.
   * Keyed by the plan object, so it lives exactly as long as the plan cache keeps that plan.
   */
  private readonly prepared = new WeakMap<SandboxPlan, { sandbox: PreparedSandbox; reads: HostJournal }>();

  constructor(private readonly deps: SandboxRunnerDeps) {}

  /**
   * The plan, launch and path guard for a context, without running anything (`fs-sandbox
   * explain`, doctor, the pre-check). The host is asked again each time: the cached plan gets the
   * read-only paths the host calls for now (`.git` pointers, the broker's own code), and the guard
   * is built from exactly what the backend mounted; when every read of the last build gets its old
   * answer, that build is what this one would be, and it is returned as it is.
   */
  async prepare(context: SandboxedContext): Promise<PreparedSandbox> {
    const [backend, runtime] = await this.backendAndRuntime(context);
    const plan = this.planFor(context, runtime);
    const reusable = this.reusesBuilds(backend);
    const known = reusable ? this.builtBy(backend, plan) : undefined;
    if (known?.reads.stillHolds()) return known.sandbox;
    const { value: sandbox, reads } = await journaled(async (): Promise<PreparedSandbox> => {
      const { plan: mounted, launch, host, runtimeReason } = await this.launchOf(backend, plan, runtime);
      const guard = buildPathGuard(mounted, host, launch.denyGlobMatches ?? []);
      return { plan: mounted, launch, runtimeReason, guard };
    });
    if (reusable && reads.size <= REUSABLE_LAUNCH_MAX_READS && reads.bytes <= REUSABLE_LAUNCH_MAX_BYTES) {
      // Shared by every request that reuses it: frozen, so no caller can alter another's sandbox.
      this.prepared.set(plan, { sandbox: deepFreeze(sandbox), reads });
    } else {
      this.prepared.delete(plan);
    }
    return sandbox;
  }

  /**
   * The sandbox `prepare` last built for this context, as it was: its host reads not asked again
   * yet. `holds()` asks them; only when it answers true is this what `prepare` would return now.
   * A request that changes nothing may start its helper on it and ask meanwhile (the broker's
   * speculative read); anything else must go through `prepare`. Null when nothing is kept.
   */
  async lastPrepared(
    context: SandboxedContext,
  ): Promise<{ sandbox: PreparedSandbox; holds(): boolean } | null> {
    const [backend, runtime] = await this.backendAndRuntime(context);
    const known = this.reusesBuilds(backend)
      ? this.builtBy(backend, this.planFor(context, runtime))
      : undefined;
    return known === undefined ? null : { sandbox: known.sandbox, holds: () => known.reads.stillHolds() };
  }

  /** The kept build of a plan, if this backend made it (a deferred probe may switch to another one). */
  private builtBy(backend: SandboxBackend, plan: SandboxPlan) {
    const known = this.prepared.get(plan);
    return known?.sandbox.launch.backend === backend.name ? known : undefined;
  }

  /** An injected protectHostPaths reads what it likes; only the built-in reads are witnessed. */
  private reusesBuilds(backend: SandboxBackend): boolean {
    return backend.witnessesHostReads === true && this.deps.protectHostPaths === undefined;
  }

  /**
   * The plan and launch alone: what `fs-sandbox explain --platform` shows for another OS, where
   * the guard, built from the files of this host (real paths, denied files' identities), would
   * describe nothing.
   */
  async prepareLaunch(context: SandboxedContext): Promise<PreparedLaunch> {
    const { plan, launch, runtimeReason } = await this.launchFor(context);
    return { plan, launch, runtimeReason };
  }

  /**
   * The launch of one command under the context's sandbox: the same plan, host protections and
   * backend as a helper's (the helper's runtime files stay bound read-only; they are public program
   * files), with the command's cwd, its network as the context says, and its environment set inside
   * the sandbox. Only bwrap runs commands so far; the other backends refuse, never run it bare.
   */
  async prepareCommand(context: SandboxedContext, command: SandboxCommand): Promise<CommandLaunchSpec> {
    const backend = await this.deps.backendFor(context);
    if (backend.os !== 'linux') {
      throw new FsError(
        'sandbox_unavailable',
        `commands are not sandboxed on ${backend.os} yet (only bwrap and Landlock on Linux run them); refused rather than run unsandboxed`,
        { kind: 'sandboxUnavailable' },
      );
    }
    if (backend.name === 'landlock') refuseBeyondLandlock(command);
    const runtime = await this.deps.runtime();
    const argv =
      command.terminal == null
        ? command.argv
        : [...terminalLauncher(runtime, command.terminal), ...command.argv];
    // The network set-up step runs first, then the terminal (if any), then the command.
    const relays = await resolveUnixSocketRelays(
      command.network.kind === 'host' ? [] : (command.network.unixSockets ?? []),
      this.planFor(context, runtime).writableRoots.map((root) => root.root),
    );
    const network = commandNetworkLaunch({ ...command, argv }, this.deps.launcherPrograms, relays);
    // The executable surface at every depth of the writable roots, found now and swept after.
    const surface = prepareCommandSurface(
      {
        ...this.planFor(context, runtime, [...(network?.reads ?? []), ...command.caFiles]),
        cwd: command.cwd,
        network: command.network.kind === 'host',
        command: true,
        ...(network === null ? {} : { launchChannel: true }),
      },
      process.env.HOME ?? null,
    );
    const plan: SandboxPlan = surface.plan;
    // Behind the broker's proxy, the command's variables reach it through the set-up step's shell
    // (set after the step ran), so bwrap itself sets none.
    const sandboxEnv = network === null ? command.env : {};
    const {
      launch,
      host,
      plan: mounted,
    } = await this.launchOf(backend, plan, { ...runtime, env: sandboxEnv });
    if (launch.cwd !== command.cwd) {
      throw new FsError(
        'permission_denied',
        `cwd ${command.cwd} is not a directory the sandbox shows (readable or writable roots)`,
        { kind: 'sandboxPreparation' },
      );
    }
    const guard = buildPathGuard(mounted, host, launch.denyGlobMatches ?? []);
    const env = network?.env ?? command.env;
    assertCwdShown(command.cwd, mounted, guard);
    assertProgramShown(command.argv[0] as string, env, command.cwd, mounted, guard);
    if (network !== null) assertProgramShown(network.argv[0] as string, {}, command.cwd, mounted, guard);
    const bound = processBoundFor(
      this.deps.maxProcesses === undefined ? DEFAULT_MAX_PROCESSES : this.deps.maxProcesses,
      (this.deps.processBound ?? processBoundMechanism)(),
    );
    // First inside the sandbox, before the network's set-up step, the terminal and the command:
    // prlimit sets the bound on itself, in the sandbox's own user namespace, and becomes the next.
    const limited =
      bound?.kind === 'rlimit' ? [bound.prlimit, `--nproc=${bound.max}:${bound.max}`, '--'] : [];
    if (limited.length > 0) {
      try {
        assertProgramShown(limited[0] as string, {}, command.cwd, mounted, guard);
      } catch {
        throw new FsError(
          'sandbox_unavailable',
          `the process bound needs ${limited[0]} inside the sandbox, and this policy does not show it`,
          { kind: 'sandboxPreparation' },
        );
      }
    }
    return {
      backend: launch.backend,
      sandboxProgram: launch.sandboxProgram,
      sandboxArgs: launch.sandboxArgs,
      argv: [...limited, ...(network?.argv ?? argv)],
      // bwrap itself gets the allowlist only; the command's variables are set inside.
      env: runtime.env,
      cwd: '/',
      ...(launch.inputs === undefined ? {} : { inputs: launch.inputs }),
      ...(network === null ? {} : { network: network.launch }),
      ...(bound?.kind === 'cgroup' ? { cgroup: { parent: bound.parent, maxProcesses: bound.max } } : {}),
      sweep: surface.sweep,
    };
  }

  /**
   * Both at once: each may spawn a probe once per process (the Bun helper's self-check, the Linux
   * backend's namespace probe), and neither needs the other.
   */
  private backendAndRuntime(context: SandboxedContext): Promise<[SandboxBackend, ResolvedHelperRuntime]> {
    return Promise.all([this.deps.backendFor(context), this.deps.runtime()]);
  }

  private async launchFor(context: SandboxedContext): Promise<PreparedLaunch & { host: HostProtections }> {
    const [backend, runtime] = await this.backendAndRuntime(context);
    return this.launchOf(backend, this.planFor(context, runtime), runtime);
  }

  private async launchOf(
    backend: SandboxBackend,
    plan: SandboxPlan,
    runtime: ResolvedHelperRuntime,
  ): Promise<PreparedLaunch & { host: HostProtections }> {
    const protect = this.deps.protectHostPaths ?? protectHostPaths;
    const host = protect(plan, runtime.ownCode, this.deps.os);
    const launch = await backend.prepare(host.plan, runtime);
    return { plan: host.plan, launch, host, runtimeReason: runtime.choice.reason };
  }

  /**
   * What every sandbox of this runner lets its program read whatever the policy grants (policy
   * widening.ts): the runtime roots and the helper's files. The pre-check and explainAccess report
   * these as readable, as the kernel lets a command read them.
   */
  async runtimeReads(): Promise<HelperRuntimeReads> {
    return this.readsOf(await this.deps.runtime());
  }

  private readsOf(runtime: ResolvedHelperRuntime): HelperRuntimeReads {
    return {
      os: this.deps.os,
      helperFiles: runtimeFiles(runtime),
      minimalRootsPresent: runtime.minimalRootsPresent,
    };
  }

  /** `extraReads`: exact files a command's launch needs beyond the helper's (its network's set-up, CA files). */
  private planFor(
    context: SandboxedContext,
    runtime: ResolvedHelperRuntime,
    extraReads: string[] = [],
  ): SandboxPlan {
    const key = JSON.stringify([
      context,
      runtime.executable.path,
      runtime.helperBundle,
      runtime.ripgrepPath,
      runtime.minimalRootsPresent,
      extraReads,
    ]);
    const known = this.plans.get(key);
    if (known !== undefined) return known;
    const reads = this.readsOf(runtime);
    const profile = widenForHelperRuntime(context.profile, {
      ...reads,
      helperFiles: [...reads.helperFiles, ...extraReads],
    });
    const plan = buildSandboxPlan({ ...context, profile }, this.deps.os);
    // Bounded: the oldest plan goes first (Map iteration follows insertion order).
    if (this.plans.size >= PLAN_CACHE_ENTRIES) this.plans.delete(this.plans.keys().next().value as string);
    this.plans.set(key, plan);
    return plan;
  }

  /**
   * Runs the request under a sandbox `prepare` made; the helper gets the guard with it. If the helper
   * dies or is killed before it replies, the temporary files it may have left are removed (see
   * temp-cleanup.ts) before the error is passed on.
   */
  async run(
    request: HelperRequest,
    prepared: PreparedSandbox,
    options: RunHelperOptions,
    context: SandboxedContext,
  ): Promise<SandboxRun> {
    const { launch, guard } = prepared;
    const scopes = tempScopesOf(request, this.deps.os);
    const tempTag = scopes.length === 0 ? undefined : newTempTag();
    try {
      const withRipgrep = await this.withRipgrep(request);
      const tagged = {
        ...withRipgrep,
        ...(tempTag === undefined ? {} : { tempTag }),
        ...(options.onProgress ? { progress: true } : {}),
      };
      return {
        reply: await this.deps.launcher(launch, { ...tagged, guard }, options),
        backend: launch.backend,
      };
    } catch (error) {
      if (tempTag !== undefined) {
        // Prepared again: Landlock's rules hold the objects that existed when a sandbox was built,
        // so a directory the killed helper made is reachable only by a sandbox built since (the
        // build is reused as it was when nothing it read has changed).
        const now = await this.prepare(context).catch(() => prepared);
        for (const scope of scopes) {
          const cleanup = { ...removeTempsRequest(scope, tempTag), guard: now.guard };
          await this.deps
            .launcher(now.launch, cleanup, { timeoutMs: TEMP_CLEANUP_TIMEOUT_MS })
            .catch(() => undefined);
        }
      }
      throw error;
    }
  }

  /** Every launch binds ripgrep at its real path, so the helper is told that path. */
  private async withRipgrep(request: HelperRequest): Promise<HelperRequest> {
    if (!runsRipgrep(request)) return request;
    const { ripgrepPath } = await this.deps.runtime();
    return ripgrepPath === null ? request : { ...request, ripgrep: ripgrepPath };
  }
}

/**
 * What puts a command on a pseudo-terminal: the Bun helper's `--pty` mode, run inside the
 * sandbox (the helper's runtime files are bound there anyway), allocates the terminal from the
 * sandbox's own devpts and makes it the command's controlling terminal in the sandbox's own
 * session, so nothing typed into it (TIOCSTI) reaches a terminal outside. Node has no terminal
 * API, so a broker running the node helper refuses rather than hand out a host terminal.
 */
function terminalLauncher(runtime: ResolvedHelperRuntime, size: { rows: number; cols: number }): string[] {
  if (runtime.executable.kind !== 'bun') {
    throw new FsError(
      'sandbox_unavailable',
      `tty: true needs the Bun helper, which allocates the terminal inside the sandbox; this broker runs the ${runtime.executable.kind} helper (${runtime.choice.reason})`,
      { kind: 'ttyUnavailable' },
    );
  }
  return [runtime.executable.path, '--pty', String(size.rows), String(size.cols), '--'];
}

/**
 * What a command cannot get under Landlock, refused before anything runs rather than given
 * without its sandbox: a terminal needs a devpts of its own (the host's would show every other
 * terminal of the uid), and a network allowlist or managed proxy needs a network namespace whose
 * only way out is the broker's listener.
 */
function refuseBeyondLandlock(command: SandboxCommand): void {
  const why =
    command.terminal != null
      ? 'a terminal (tty) needs a private devpts'
      : command.network.kind !== 'none' && command.network.kind !== 'host'
        ? 'a network allowlist or managed proxy needs a network namespace'
        : command.network.kind !== 'host' && (command.network.unixSockets?.length ?? 0) > 0
          ? // The relay's loopback ports are in the command's own network namespace; without one they
            // would be the host's, open to every process on it.
            'a unix socket relay (--allow-unix-socket) needs a network namespace'
          : null;
  if (why !== null)
    throw new FsError(
      'sandbox_unavailable',
      `the Landlock backend (no namespaces here) cannot run this command: ${why}; refused rather than run with less`,
      { kind: 'sandboxUnavailable' },
    );
}
