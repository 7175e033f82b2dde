import { type ChildProcess, spawn } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { FsError, type HostOs } from '@fs-sandbox/policy';
import type { RuntimeExecutable } from '../backends/backend.js';

/** What the caller asks for: `auto` takes Bun where it is installed and works, else node. */
export type HelperRuntimeChoice = 'auto' | 'bun' | 'node';

export const HELPER_RUNTIME_CHOICES: readonly HelperRuntimeChoice[] = ['auto', 'bun', 'node'];
export const HELPER_RUNTIME_ENV = 'FS_SANDBOX_HELPER_RUNTIME';

/** The runtime the helpers run under, and why that one (for `doctor` and `explain`). */
export interface ChosenRuntime {
  executable: RuntimeExecutable;
  requested: HelperRuntimeChoice;
  reason: string;
  /**
   * Set when `auto` runs node where the Bun helper could run (Linux x64/arm64) but is missing or
   * failed its self-check: why. `doctor` reports it as a warning, since every helper then starts
   * slower than it should; a platform where Bun never runs the helper, or node asked for, is not.
   */
  bunUnusable?: string;
  /**
   * Set when the Bun helper was taken without its self-check (`selfCheck: 'deferred'`): the first
   * helper run under it is the check, and the broker runs the real one if that run fails
   * (core/deferred-probes.ts).
   */
  unchecked?: true;
}

/**
 * `now`: the self-check runs before the choice is made. `deferred`: an installed Bun helper is taken
 * on trust, to be proven by the first helper run (it saves a process start, ~12 ms, on every
 * one-shot command).
 */
export type SelfCheckTiming = 'now' | 'deferred';

const SELF_CHECK_TIMEOUT_MS = 5_000;
/** Enough for the reply of the self-check request; more is not kept. */
const SELF_CHECK_OUTPUT_BYTES = 4_096;
/** A harmless request the helper answers without a sandbox: the metadata of `/`. */
const SELF_CHECK_REQUEST = `${JSON.stringify({ operation: 'fs/getMetadata', params: { path: '/' } })}\n`;

/**
 * Bun runs the helper only on Linux x64 and arm64 for now: the Seatbelt profile and the Windows
 * launcher allow node's executable and were not proven with Bun's JIT, so there `auto` means node
 * and `bun` is refused. Where it runs, the Bun helper is one executable in the helper's package for
 * this platform (`@fs-sandbox/helper-linux-x64`, an optional dependency of `@fs-sandbox/helper`;
 * in a checkout the build compiles it there).
 */
const BUN_ARCHES: ReadonlySet<string> = new Set(['x64', 'arm64']);

/**
 * The requested choice: the option, else FS_SANDBOX_HELPER_RUNTIME, else `auto`; anything else is
 * refused.
 */
export function requestedRuntime(
  option: HelperRuntimeChoice | undefined,
  env: Record<string, string | undefined>,
): HelperRuntimeChoice {
  const raw = option ?? env[HELPER_RUNTIME_ENV] ?? 'auto';
  if ((HELPER_RUNTIME_CHOICES as readonly string[]).includes(raw)) return raw as HelperRuntimeChoice;
  const from = option === undefined ? `${HELPER_RUNTIME_ENV}=` : 'helperRuntime ';
  throw new FsError(
    'invalid_params',
    `unknown helper runtime ${from}\`${raw}\` (expected one of ${HELPER_RUNTIME_CHOICES.join(', ')})`,
  );
}

/**
 * Picks the helper runtime once per broker. The Bun helper is taken when it is installed and a
 * self-check passes: run with the helper's environment and cwd `/`, it must answer a real request.
 * `bun` asked for explicitly and unusable is a typed refusal, never a silent switch to node; `auto`
 * falls back to node and says why. `bunHelper` locates the compiled Bun helper (it throws when
 * there is none). The self-check runs that file unsandboxed, as the broker's user: an override of
 * it (FS_SANDBOX_HELPER_BUNDLE, `helperBundle`) is trusted configuration, like node itself.
 */
export async function chooseRuntime(
  requested: HelperRuntimeChoice,
  os: HostOs,
  helperEnv: Record<string, string>,
  bunHelper: () => string,
  arch: string = process.arch,
  selfCheck: SelfCheckTiming = 'now',
): Promise<ChosenRuntime> {
  const node: RuntimeExecutable = { kind: 'node', path: await realpath(process.execPath) };
  if (requested === 'node') return { executable: node, requested, reason: 'node, as asked' };
  const bun = await usableBun(os, arch, helperEnv, bunHelper, selfCheck);
  if (bun.executable !== null && selfCheck === 'deferred') {
    return {
      executable: bun.executable,
      requested,
      reason: `${bun.detail}; its first run is its self-check`,
      unchecked: true,
    };
  }
  if (bun.executable !== null) {
    return { executable: bun.executable, requested, reason: `${bun.detail}; it passed the self-check` };
  }
  if (requested === 'bun') {
    throw new FsError('sandbox_unavailable', `the Bun helper runtime was asked for but ${bun.detail}`);
  }
  return {
    executable: node,
    requested,
    reason: `node, because ${bun.detail}`,
    ...(bun.supported ? { bunUnusable: bun.detail } : {}),
  };
}

async function usableBun(
  os: HostOs,
  arch: string,
  helperEnv: Record<string, string>,
  bunHelper: () => string,
  selfCheck: SelfCheckTiming,
): Promise<{ executable: RuntimeExecutable | null; detail: string; supported: boolean }> {
  if (os !== 'linux' || !BUN_ARCHES.has(arch)) {
    return {
      executable: null,
      detail: `Bun runs the helper only on Linux x64/arm64 (this is ${os} ${arch})`,
      supported: false,
    };
  }
  let path: string;
  try {
    path = await realpath(bunHelper());
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { executable: null, detail: `the Bun helper is not installed: ${why}`, supported: true };
  }
  const check = selfCheck === 'deferred' ? null : await runSelfCheck(path, helperEnv);
  if (check === null) {
    return { executable: { kind: 'bun', path }, detail: 'the Bun helper is installed', supported: true };
  }
  return {
    executable: null,
    detail: `the Bun helper ${path} failed its self-check (${check})`,
    supported: true,
  };
}

/**
 * null when the helper answered the self-check request, else what went wrong. Bounded in time and
 * output: on the timeout its whole process group is killed and the answer is given at once, even if
 * something it started still holds its output open.
 */
function runSelfCheck(path: string, env: Record<string, string>): Promise<string | null> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let child: ChildProcess;
    try {
      child = spawn(path, [], { env, cwd: '/', detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (error) {
      settle(error instanceof Error ? error.message : String(error));
      return;
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      settle(`it did not answer within ${SELF_CHECK_TIMEOUT_MS} ms`);
    }, SELF_CHECK_TIMEOUT_MS);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      if (stdout.length < SELF_CHECK_OUTPUT_BYTES) stdout += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < SELF_CHECK_OUTPUT_BYTES) stderr += chunk.toString('utf8');
    });
    child.stdin?.on('error', () => {});
    child.on('error', (error) => settle(error.message));
    child.on('close', (code, signal) => {
      if (code === 0 && stdout.startsWith('{"status":"ok"')) settle(null);
      else {
        const status = signal === null ? `exited with status ${code}` : `was killed by ${signal}`;
        settle(
          `it ${status} and printed ${JSON.stringify(stdout.slice(0, 80))} ${stderr.slice(0, 200)}`.trim(),
        );
      }
    });
    child.stdin?.end(SELF_CHECK_REQUEST);
  });
}
