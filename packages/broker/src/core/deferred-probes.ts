import type { BackendName } from '../backends/backend.js';
import type { ResolvedHelperRuntime } from '../runner/helper-runtime.js';
import type { SelfCheckTiming } from '../runner/runtime-choice.js';

export interface DeferredProbeDeps {
  /** The helper runtime, its Bun self-check run first (`now`) or left to the first helper run. */
  runtime(selfCheck: SelfCheckTiming): Promise<ResolvedHelperRuntime>;
  /**
   * Runs the backend probe a deferred choice skipped (Linux `auto`: bwrap's namespace probe): true
   * when it takes another backend than the unchecked one, or none (the retry then meets its refusal).
   */
  settleBackend(): Promise<boolean>;
  /** A helper answered under this backend: an unchecked bwrap made its namespaces. */
  backendProven(backend: BackendName): void;
}

/**
 * The probes a broker runs before it trusts its helper runtime and backend: the Bun helper's
 * self-check (a process start, ~12 ms) and, under the Linux backend `auto`, bwrap's namespace probe
 * (a sandbox of its own). A one-shot read (`fs-sandbox cat`, every human verb) paid both before its
 * one helper, so they are deferred until they are needed: a request that changes nothing (not write
 * class, not a batch) runs at once under the Bun helper and bwrap unprobed, and its answer proves
 * both. If it fails without an answer (`mayRetry`), the probes run for real; when one shows its
 * choice unusable, node (or Landlock, or the typed refusal) takes over exactly as if it had run
 * first, and the request runs again. Running a read twice changes nothing, as the speculative read
 * (speculative-run.ts) already relies on. Everything else (writes, batches, commands, explain) runs
 * the probes first, both at once.
 */
export class DeferredProbes {
  private phase: 'deferred' | 'settled' = 'deferred';
  private provisional: Promise<ResolvedHelperRuntime> | null = null;
  private checked: Promise<ResolvedHelperRuntime> | null = null;
  private settling: Promise<boolean> | null = null;

  constructor(private readonly deps: DeferredProbeDeps) {}

  /** Whether the choices are still unproven: a read may then run before the probes. */
  get deferred(): boolean {
    return this.phase === 'deferred';
  }

  /** For the backend choice: `deferred` until the probes ran or a helper answered. */
  get probeTiming(): 'now' | 'deferred' {
    return this.phase === 'deferred' ? 'deferred' : 'now';
  }

  /** The runtime of the current phase, resolved once; a failure (bundle not built yet) is not kept. */
  runtime(): Promise<ResolvedHelperRuntime> {
    if (this.phase === 'deferred') {
      this.provisional ??= this.uncachedOnFailure(this.deps.runtime('deferred'), 'provisional');
      return this.provisional;
    }
    this.checked ??= this.uncachedOnFailure(this.deps.runtime('now'), 'checked');
    return this.checked;
  }

  /** A helper answered under the unproven choices: they work, and no probe runs. */
  confirm(backend: BackendName): void {
    if (this.phase !== 'deferred') return;
    this.phase = 'settled';
    this.checked = this.provisional;
    this.deps.backendProven(backend);
  }

  /**
   * Runs the deferred probes once, both at once. True when one of them changed a choice a request
   * already ran under (a retry then runs under the new one); false when nothing was deferred or
   * nothing changed.
   */
  settle(): Promise<boolean> {
    this.settling ??= (async () => {
      const provisional = this.provisional === null ? null : await this.provisional.catch(() => null);
      this.phase = 'settled';
      const runtimeChanged = async (): Promise<boolean> => {
        if (provisional !== null && provisional.choice.unchecked !== true) {
          this.checked = this.provisional;
          return false;
        }
        try {
          const checked = await this.runtime();
          return provisional !== null && checked.executable.path !== provisional.executable.path;
        } catch {
          // Refused now (the Bun helper asked for and unusable): the retry meets the refusal.
          return provisional !== null;
        }
      };
      const [runtime, backend] = await Promise.all([runtimeChanged(), this.deps.settleBackend()]);
      return runtime || backend;
    })();
    return this.settling;
  }

  private uncachedOnFailure(
    resolving: Promise<ResolvedHelperRuntime>,
    slot: 'provisional' | 'checked',
  ): Promise<ResolvedHelperRuntime> {
    resolving.catch(() => {
      if (this[slot] === resolving) this[slot] = null;
    });
    return resolving;
  }
}

/**
 * Failures after which the helper may not have answered because a deferred choice does not work:
 * it could not be started or set up (`sandbox_unavailable`), exited without a reply
 * (`helper_failed`), or never answered (`timeout`). A cancel is the caller's, and a refusal the
 * policy's.
 */
export function mayBeUnusableChoice(error: unknown): boolean {
  const kind = (error as { kind?: unknown } | null)?.kind;
  return kind === 'sandbox_unavailable' || kind === 'helper_failed' || kind === 'timeout';
}
