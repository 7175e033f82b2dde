import { type HelperReply, type HelperRequest, runRequest } from '@fs-sandbox/helper';
import {
  carriesRequests,
  currentHostOs,
  FsError,
  type HelperMethod,
  type HostOs,
  isFsError,
  isHelperMethod,
  isWriteClassMethod,
  nativePathOf,
  type ParamsIn,
  type ParsedParams,
  type PathGuard,
  parseSandboxContext,
  type ResultOf,
  type SandboxContextInput,
  type SandboxedContext,
  type TouchedPath,
} from '@fs-sandbox/policy';
import type { BackendName, CommandLaunchSpec, SandboxBackend } from './backends/backend.js';
import {
  bwrapProven,
  type LinuxBackendPreference,
  requestedLinuxBackend,
  settleLinuxBackend,
} from './backends/linux/linux-backend-choice.js';
import { selectBackend } from './backends/select-backend.js';
import type { Broker, CallInfo, CallOptions } from './broker-api.js';
import {
  type CommandRunOptions,
  type CommandSpawnOptions,
  parseCommandRequest,
  type RunResult,
  runOutputCap,
  type SpawnedCommand,
} from './command-api.js';
import { admitRequest } from './core/admission.js';
import { BatchPlan } from './core/batch-plan.js';
import { DeferredProbes, mayBeUnusableChoice } from './core/deferred-probes.js';
import { explainPathAccess } from './core/explain-access.js';
import { forLibraryCaller } from './core/library-errors.js';
import { type ParsedRequest, parseRequest } from './core/parsed-request.js';
import { precheckPhysical, precheckRequest } from './core/precheck.js';
import { assertSandboxed, routeFor, runRouted } from './core/routing.js';
import { runOnLastSandbox } from './core/speculative-run.js';
import { assertTrusted, untrustedCommand } from './core/trust-gate.js';
import type { PoolOptions } from './pool/pool-options.js';
import { resolvePoolOptions } from './pool/pool-options.js';
import type { PoolStats } from './pool/pool-stats.js';
import { WarmPool } from './pool/warm-pool.js';
import { type CommandLaunchRequest, sandboxCommandOf, unsandboxedCommandOf } from './runner/command-setup.js';

export type { CommandLaunchRequest } from './runner/command-setup.js';

import { resolveHelperRuntime, resolveRipgrep, runsRipgrep } from './runner/helper-runtime.js';
import type { HelperRuntimeChoice } from './runner/runtime-choice.js';
import { type PreparedSandbox, type SandboxRun, SandboxRunner } from './runner/sandbox-runner.js';
import { type HelperLauncher, runHelper } from './runner/spawn-helper.js';
import { runCommand, startCommand } from './runner/spawned-command.js';

export interface BrokerOptions {
  /** Host OS rules for paths and backends (default: this host). */
  os?: HostOs;
  /** The broker's environment: the helper's is filtered from it, FS_SANDBOX_BWRAP is read from it. */
  env?: Record<string, string | undefined>;
  /**
   * Clear denials before spawning (default true). Tests turn it off to show that the kernel
   * sandbox, not this check, is what enforces the policy.
   */
  precheck?: boolean;
  /** Default helper run time per call (LIMITS.helperTimeoutMs when unset). */
  timeoutMs?: number;
  /**
   * Tasks (processes and threads) one sandboxed command may hold at once, where the machine offers
   * a bound (a cgroup's pids controller, or RLIMIT_NPROC for a broker that is not root; `fs-sandbox
   * doctor` says which). Default 1024; null for none.
   */
  maxProcesses?: number | null;
  /**
   * Refuse (`permission_denied`) every request that would run outside a platform sandbox: no
   * context, or one routed in-process (disabled, external, unrestricted, full-disk write). Default false.
   */
  requireSandbox?: boolean;
  /**
   * The sandbox context (wire form) of every request that carries none (`sandbox` absent or null):
   * the policy of a server that answers clients which send no context for some of their calls (the
   * Codex client's project discovery). Those requests then run under it, sandboxed, instead of
   * in-process, so `requireSandbox` refuses only requests of contexts that are themselves
   * unsandboxed. Parsed here: a bad context fails createBroker. Default: none.
   */
  serverPolicy?: unknown;
  /**
   * Warm helper pool (on by default): helpers spawned ahead per sandbox shape, bounded and expiring.
   * `false` for one-shot use, where a spare would be spawned only to be killed. Ignored when a
   * `launcher` is given.
   */
  pool?: Partial<PoolOptions> | false;
  /** How a prepared launch and one request become a reply (tests; default: the pool, or a cold spawn). */
  launcher?: HelperLauncher;
  /** Overrides the platform backend choice (tests, the doctor). */
  backendFor?: (context: SandboxedContext) => SandboxBackend | Promise<SandboxBackend>;
  /**
   * The Linux sandbox: `auto` (bwrap where it can make its namespaces, else Landlock; decided once
   * per process), `bwrap` or `landlock`. Default: FS_SANDBOX_BACKEND from `env`, else `auto`. A
   * context's `requireBackend` refuses any other.
   */
  backend?: LinuxBackendPreference;
  /**
   * Overrides the helper program of the chosen runtime (default: the built helper of
   * @fs-sandbox/helper): a script for node, an executable for Bun. Trusted configuration: the Bun
   * self-check runs it unsandboxed, as the broker's user.
   */
  helperBundle?: string;
  /**
   * `false` for an untrusted workspace: every write-class method (one that creates, replaces or
   * removes a path, or a batch holding one) and every command (process/start) is refused with
   * `untrusted_workspace` before any helper or command runs. Reads are unaffected. Default true.
   */
  trusted?: boolean;
  /**
   * The runtime that executes the helper: `auto` (the compiled Bun helper when its package for this
   * platform is installed and it passes a self-check, else node), `bun` or `node`. Default: FS_SANDBOX_HELPER_RUNTIME
   * from `env`, else `auto` (see requestedRuntime).
   */
  helperRuntime?: HelperRuntimeChoice;
}

/**
 * The broker as a library. Beyond the Broker interface it accepts the helper methods the method
 * table does not expose (fs/openForRead, fs/readRange behind the server's read handles), and can
 * show the sandbox it would build for a context. Binary results (readFile's `dataBase64`,
 * readRange's `chunk`) are Buffers: the base64 of a 512 MiB file does not fit in a JavaScript
 * string, so serialisers encode them.
 */
export interface FsBroker extends Broker {
  call<M extends HelperMethod>(method: M, params: ParamsIn<M>, options?: CallOptions): Promise<ResultOf<M>>;
  callWithInfo<M extends HelperMethod>(
    method: M,
    params: unknown,
    options?: CallOptions,
  ): Promise<{ result: ResultOf<M>; info: CallInfo }>;
  /** The plan, the exact platform launch and the path guard a sandbox context produces, without running it. */
  prepareSandbox(sandbox: SandboxContextInput | null): Promise<PreparedSandbox>;
  /** The warm pool's counters and live helpers, or null when this broker has no pool. */
  poolStats(): PoolStats | null;
  /**
   * Runs one command under its sandbox context to its end: `{ exitCode, stdout, stderr }` (strings,
   * Buffers with `encoding: 'buffer'`), bounded by `outputBytesCap` (default and most:
   * LIMITS.commandRunOutputBytes). A refusal (a denied cwd, a program the sandbox does not show, an
   * untrusted broker) rejects with an FsError; the command's own failure is its exit code.
   */
  run(
    argv: readonly string[],
    options: CommandRunOptions & { encoding: 'buffer' },
  ): Promise<RunResult<Buffer>>;
  run(argv: readonly string[], options?: CommandRunOptions): Promise<RunResult<string>>;
  /** Starts one command under its sandbox context: its stdout and stderr stream, stdin is writable. */
  spawn(argv: readonly string[], options?: CommandSpawnOptions): Promise<SpawnedCommand>;
  /**
   * The launch of one command (process/start) under its sandbox context, what `run` and `spawn`
   * start. It runs unsandboxed only where the context grants everything anyway (as a helper
   * operation would run in-process), and never so with `requireSandbox`.
   */
  prepareCommand(
    sandbox: SandboxContextInput | null,
    request: CommandLaunchRequest,
  ): Promise<CommandLaunchSpec>;
}

export function createBroker(options: BrokerOptions = {}): FsBroker {
  const os = options.os ?? currentHostOs();
  const env = options.env ?? process.env;
  const precheck = options.precheck ?? true;
  const serverPolicy = options.serverPolicy == null ? null : parseSandboxContext(options.serverPolicy);
  // In-process requests need no helper bundle, only ripgrep for the methods that run it.
  let inProcessRipgrep: Promise<string | null> | null = null;
  const poolOptions = options.launcher === undefined ? resolvePoolOptions(options.pool) : null;
  const pool = poolOptions === null ? null : new WarmPool(poolOptions);
  const { maxProcesses } = options;
  // PID_MAX_LIMIT: no machine runs more tasks than that.
  if (
    maxProcesses != null &&
    (!Number.isInteger(maxProcesses) || maxProcesses < 1 || maxProcesses > 4_194_304)
  ) {
    throw new FsError(
      'invalid_params',
      `maxProcesses must be an integer from 1 to 4194304, or null; got ${maxProcesses}`,
    );
  }
  const probes = new DeferredProbes({
    runtime: (selfCheck) =>
      resolveHelperRuntime(os, env, options.helperBundle, options.helperRuntime, selfCheck),
    settleBackend: async () =>
      os === 'linux' &&
      options.backendFor === undefined &&
      settleLinuxBackend(requestedLinuxBackend(options.backend, env), env),
    backendProven: (backend) => {
      if (backend === 'bwrap') bwrapProven(env);
    },
  });
  const runner = new SandboxRunner({
    os,
    ...(options.maxProcesses === undefined ? {} : { maxProcesses: options.maxProcesses }),
    backendFor:
      options.backendFor ??
      ((context) =>
        selectBackend({
          os,
          env,
          windowsSandboxLevel: context.windowsSandboxLevel,
          ...(options.backend === undefined ? {} : { linuxBackend: options.backend }),
          requireBackend: context.requireBackend,
          probe: probes.probeTiming,
        })),
    runtime: () => probes.runtime(),
    launcher: options.launcher ?? pool?.launch ?? runHelper,
  });
  let closed = false;

  async function runInProcess(
    request: HelperRequest,
    onProgress: CallOptions['onProgress'],
  ): Promise<HelperReply> {
    const runOptions = onProgress ? { onProgress } : {};
    if (!runsRipgrep(request)) return runRequest(request, runOptions);
    inProcessRipgrep ??= resolveRipgrep();
    const ripgrep = await inProcessRipgrep;
    return runRequest(ripgrep === null ? request : { ...request, ripgrep }, runOptions);
  }

  async function callWithInfo<M extends HelperMethod>(
    method: M,
    rawParams: unknown,
    callOptions: CallOptions = {},
  ): Promise<{ result: ResultOf<M>; info: CallInfo }> {
    try {
      if (closed) throw new FsError('internal_error', 'the broker is closed');
      if (!isHelperMethod(method))
        throw new FsError('invalid_request', `unknown method \`${String(method)}\``);
      const request = parseRequest(method, rawParams, os, serverPolicy);
      if (options.trusted === false) assertTrusted(request);
      if (options.requireSandbox) assertSandboxed(request.route);
      const answered = admitRequest(request, os);
      if (answered !== null)
        return { result: answered as ResultOf<M>, info: { sandboxed: false, backend: null } };
      const batch = isBatch(request)
        ? new BatchPlan(request.helper.params.operations, request.route, os)
        : null;
      // A batch pre-checks each operation on its own: a refused one is answered, the rest still run.
      const prechecked = (check: (paths: readonly TouchedPath[]) => void): void =>
        batch === null ? check(request.paths) : batch.refuse(check);
      const toRun = (): HelperRequest | null =>
        batch === null
          ? request.helper
          : batch.request(request.helper as unknown as HelperRequest<'fs/batch'>);
      const runOptions = {
        signal: callOptions.signal,
        timeoutMs: callOptions.timeoutMs ?? options.timeoutMs,
        ...(callOptions.onProgress ? { onProgress: callOptions.onProgress } : {}),
      };
      // A request that creates, replaces and removes nothing: it may run on the last build of its
      // sandbox (speculative-run.ts), and before the deferred probes (deferred-probes.ts).
      const readOnly = batch === null && !isWriteClassMethod(request.method);
      const runSandboxed = async (context: SandboxedContext): Promise<SandboxRun | NoRun> => {
        if (precheck) {
          // Unknown when the runtime cannot be resolved: the refusal then names the rule, and
          // preparing the sandbox fails on its own.
          const runtimeReads = await runner.runtimeReads().catch(() => null);
          prechecked((paths) => precheckRequest(paths, context.profile, os, context.surface, runtimeReads));
        }
        if (readOnly) {
          const physical = precheck ? (guard: PathGuard) => precheckPhysical(request.paths, guard, os) : null;
          const speculated = await runOnLastSandbox(runner, context, request.helper, physical, runOptions);
          if (speculated !== null) return speculated;
        }
        const prepared = await runner.prepare(context);
        if (precheck) prechecked((paths) => precheckPhysical(paths, prepared.guard, os));
        const helperRequest = toRun();
        if (helperRequest === null) return { reply: null, backend: prepared.launch.backend };
        return runner.run(helperRequest, prepared, runOptions, context);
      };
      const { reply, info } = await runRouted(request.helper, request.route, {
        inProcess: async () => {
          const helperRequest = toRun();
          return helperRequest === null ? null : runInProcess(helperRequest, callOptions.onProgress);
        },
        sandboxed: async (_request, context) => {
          if (!readOnly) await probes.settle();
          if (!readOnly || !probes.deferred) return runSandboxed(context);
          try {
            const run = await runSandboxed(context);
            probes.confirm(run.backend);
            return run;
          } catch (error) {
            // Run again only when a probe took another runtime or backend: a read changes nothing.
            if (!mayBeUnusableChoice(error) || !(await probes.settle())) throw error;
            return runSandboxed(context);
          }
        },
      });
      return { result: resultOf<M>(batch === null ? (reply as HelperReply) : batch.merged(reply)), info };
    } catch (error) {
      throw asFsError(error);
    }
  }

  async function prepareCommand(
    sandbox: SandboxContextInput | null,
    request: CommandLaunchRequest,
  ): Promise<CommandLaunchSpec> {
    try {
      if (closed) throw new FsError('internal_error', 'the broker is closed');
      if (options.trusted === false) throw untrustedCommand();
      const context = parseSandboxContext(sandbox);
      const route = routeFor(context, os, serverPolicy);
      if (options.requireSandbox) assertSandboxed(route);
      if (route.kind === 'sandbox') {
        // A command runs only under proven choices: its launch is not retried.
        await probes.settle();
        return await runner.prepareCommand(
          route.context,
          sandboxCommandOf(request, route.context.profile, env, os),
        );
      }
      if (request.terminal != null) {
        throw new FsError('sandbox_unavailable', 'a terminal is given to sandboxed commands only', {
          kind: 'ttyUnavailable',
        });
      }
      const command = unsandboxedCommandOf(request, context?.permissions ?? null, env, os);
      return { backend: null, sandboxProgram: null, sandboxArgs: [], ...command };
    } catch (error) {
      throw asFsError(error);
    }
  }

  /** `spawn` and `run` once their options are parsed: process/start's launch, then the process. */
  async function spawnParsed(
    request: ParsedParams<'process/start'>,
    stdin: CommandSpawnOptions['stdin'] & {},
    { signal, onNetwork }: Pick<CommandSpawnOptions, 'signal' | 'onNetwork'>,
    outputBytesCap: number | null,
  ): Promise<SpawnedCommand> {
    const launch = await prepareCommand(request.sandbox ?? null, {
      argv: request.argv,
      cwd: nativePathOf(request.cwd, os),
      env: request.env,
      envPolicy: request.envPolicy,
    });
    return startCommand(launch, {
      stdin,
      signal,
      onNetwork,
      timeoutMs: request.timeoutMs ?? null,
      outputBytesCap: outputBytesCap ?? request.outputBytesCap ?? null,
    });
  }

  return {
    callWithInfo,
    // The typed entry of library callers (the server and the CLI use callWithInfo, and the wire's words).
    async call(method, params, callOptions) {
      try {
        return (await callWithInfo(method, params, callOptions)).result;
      } catch (error) {
        throw forLibraryCaller(asFsError(error), params, os);
      }
    },
    async explainAccess(params) {
      try {
        if (closed) throw new FsError('internal_error', 'the broker is closed');
        // What it shows is what the probes chose, not what a first read would try.
        await probes.settle();
        return await explainPathAccess(params, {
          os,
          runner,
          untrusted: options.trusted === false,
          requireSandbox: options.requireSandbox === true,
          serverPolicy,
        });
      } catch (error) {
        throw forLibraryCaller(asFsError(error), params, os);
      }
    },
    async prepareSandbox(sandbox) {
      try {
        const route = routeFor(parseSandboxContext(sandbox), os);
        if (route.kind === 'in-process') {
          throw new FsError(
            'invalid_params',
            `this context does not need a sandbox (${route.reason}); it runs in-process`,
          );
        }
        await probes.settle();
        return await runner.prepare(route.context);
      } catch (error) {
        throw asFsError(error);
      }
    },
    poolStats() {
      return pool?.stats() ?? null;
    },
    prepareCommand,
    async spawn(argv, spawnOptions = {}) {
      try {
        const { stdin = 'pipe', signal, onNetwork, ...wire } = spawnOptions;
        return await spawnParsed(parseCommandRequest(argv, wire), stdin, { signal, onNetwork }, null);
      } catch (error) {
        throw forLibraryCaller(asFsError(error), spawnOptions, os);
      }
    },
    // The overloads are the interface's; one body serves both.
    async run(
      argv: readonly string[],
      runOptions: CommandRunOptions = {},
    ): Promise<RunResult<string & Buffer>> {
      try {
        const { stdin, encoding = 'utf8', signal, onNetwork, ...wire } = runOptions;
        const request = parseCommandRequest(argv, wire);
        const cap = runOutputCap(request.outputBytesCap);
        const events = { signal, onNetwork };
        const spawned = await spawnParsed(request, stdin === undefined ? 'ignore' : 'pipe', events, cap);
        const { exit, stdout, stderr } = await runCommand(spawned, stdin);
        const text = (bytes: Buffer) => (encoding === 'buffer' ? bytes : bytes.toString('utf8'));
        return { ...exit, stdout: text(stdout), stderr: text(stderr) } as RunResult<string & Buffer>;
      } catch (error) {
        throw forLibraryCaller(asFsError(error), runOptions, os);
      }
    },
    async close() {
      closed = true;
      // No helper outlives the broker: spares and helpers still running are killed.
      await pool?.close();
    },
  };
}

/** A batch whose every operation was refused before any helper ran. */
interface NoRun {
  reply: null;
  backend: BackendName;
}

/** A request that carries others (the method table's `innerRequests`: fs/batch) runs through its batch plan. */
function isBatch(request: ParsedRequest): request is ParsedRequest<'fs/batch'> {
  return carriesRequests(request.method);
}

/** A reply as the caller sees it: the response (binary field as a Buffer), or the reply's error thrown. */
function resultOf<M extends HelperMethod>(reply: HelperReply): ResultOf<M> {
  if (reply.status === 'error') {
    const { errorKind, ...extra } = reply.payload.data;
    throw new FsError(errorKind, reply.payload.message, Object.keys(extra).length > 0 ? extra : undefined);
  }
  const { response } = reply.payload;
  const result =
    reply.binary === undefined ? response : { ...response, [reply.binary.field]: reply.binary.data };
  return result as ResultOf<M>;
}

/** The one error mapping at the broker boundary: FsErrors from any copy pass through, anything else is internal. */
function asFsError(error: unknown): FsError {
  if (isFsError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FsError('internal_error', `internal broker error: ${message}`);
}
