import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { FsError, type HostOs } from '@fs-sandbox/policy';
import type { RuntimeExecutable } from '../backends/backend.js';
import { runtimeFlags } from '../backends/runtime-flags.js';

/** What the caller asks for: `auto` takes Bun where it is installed and works, else node. */
export type HelperRuntimeChoice = 'auto' | 'bun' | 'node';

export const HELPER_RUNTIME_CHOICES: readonly HelperRuntimeChoice[] = ['auto', 'bun', 'node'];
export const HELPER_RUNTIME_ENV = 'FS_SANDBOX_HELPER_RUNTIME';

/** The runtime the helpers run under, and why that one (for `doctor` and `explain`). */
export interface ChosenRuntime {
  executable: RuntimeExecutable;
  requested: HelperRuntimeChoice;
  reason: string;
}

const SELF_CHECK_TIMEOUT_MS = 5_000;
const SELF_CHECK_OUTPUT = 'fs-sandbox-bun-ok';

/**
 * The optional per-platform packages that carry Bun's binary (dependencies of the broker package,
 * pinned; npm and pnpm install only the one matching this CPU and libc), as the package manifest
 * each resolves to. Bun runs the helper only on Linux for now: the Seatbelt profile and the
 * Windows launcher allow node's executable and were not proven with Bun's JIT, so there `auto`
 * means node and `bun` is refused.
 */
const BUN_PACKAGES: Record<string, ReadonlyArray<readonly [string, () => string]>> = {
  x64: [
    ['@oven/bun-linux-x64', () => require.resolve('@oven/bun-linux-x64/package.json')],
    ['@oven/bun-linux-x64-musl', () => require.resolve('@oven/bun-linux-x64-musl/package.json')],
  ],
  arm64: [
    ['@oven/bun-linux-aarch64', () => require.resolve('@oven/bun-linux-aarch64/package.json')],
    ['@oven/bun-linux-aarch64-musl', () => require.resolve('@oven/bun-linux-aarch64-musl/package.json')],
  ],
};
const require = createRequire(import.meta.url);

/**
 * The requested choice: the option, else FS_SANDBOX_HELPER_RUNTIME, else `node`; anything else is
 * refused. node stays the default until Bun keeps inherited descriptors out of the helper: Bun
 * marks every inherited descriptor close-on-exec at start, so the helper's closing of inherited
 * descriptors (which spares the runtime's own, close-on-exec ones) leaves them open
 * (test/inherited-descriptors.test.ts fails under Bun).
 */
export function requestedRuntime(
  option: HelperRuntimeChoice | undefined,
  env: Record<string, string | undefined>,
): HelperRuntimeChoice {
  const raw = option ?? env[HELPER_RUNTIME_ENV] ?? 'node';
  if ((HELPER_RUNTIME_CHOICES as readonly string[]).includes(raw)) return raw as HelperRuntimeChoice;
  const from = option === undefined ? `${HELPER_RUNTIME_ENV}=` : 'helperRuntime ';
  throw new FsError(
    'invalid_params',
    `unknown helper runtime ${from}\`${raw}\` (expected one of ${HELPER_RUNTIME_CHOICES.join(', ')})`,
  );
}

/**
 * Picks the helper runtime once per broker. Bun is taken when its package is installed and a
 * self-check passes: the hardened Bun, with the helper's environment and cwd `/`, must run a
 * one-line program and print its answer. `bun` asked for explicitly and unusable is a typed refusal,
 * never a silent switch to node; `auto` falls back to node and says why.
 */
export async function chooseRuntime(
  requested: HelperRuntimeChoice,
  os: HostOs,
  helperEnv: Record<string, string>,
  arch: string = process.arch,
): Promise<ChosenRuntime> {
  const node: RuntimeExecutable = { kind: 'node', path: await realpath(process.execPath) };
  if (requested === 'node') return { executable: node, requested, reason: 'node: the default, or asked for' };
  const bun = await usableBun(os, arch, helperEnv);
  if (bun.executable !== null) {
    return { executable: bun.executable, requested, reason: `${bun.detail}; it passed the self-check` };
  }
  if (requested === 'bun') {
    throw new FsError('sandbox_unavailable', `the Bun helper runtime was asked for but ${bun.detail}`);
  }
  return { executable: node, requested, reason: `node, because ${bun.detail}` };
}

async function usableBun(
  os: HostOs,
  arch: string,
  helperEnv: Record<string, string>,
): Promise<{ executable: RuntimeExecutable | null; detail: string }> {
  const candidates = os === 'linux' ? (BUN_PACKAGES[arch] ?? []) : [];
  if (candidates.length === 0) {
    return {
      executable: null,
      detail: `Bun runs the helper only on Linux x64/arm64 (this is ${os} ${arch})`,
    };
  }
  for (const [name, manifest] of candidates) {
    let path: string;
    try {
      path = await realpath(join(dirname(manifest()), 'bin', 'bun'));
    } catch {
      continue;
    }
    const check = await selfCheck(path, helperEnv);
    if (check === null) return { executable: { kind: 'bun', path }, detail: `Bun from ${name}` };
    return { executable: null, detail: `Bun from ${name} failed its self-check (${check})` };
  }
  const names = candidates.map(([name]) => name).join(', ');
  return { executable: null, detail: `no Bun package is installed for this platform (${names})` };
}

/** null when the hardened Bun ran a program and printed its answer, else what went wrong. */
function selfCheck(path: string, env: Record<string, string>): Promise<string | null> {
  const args = [...runtimeFlags('bun'), '-e', `process.stdout.write(${JSON.stringify(SELF_CHECK_OUTPUT)})`];
  return new Promise((resolve) => {
    execFile(path, args, { env, cwd: '/', timeout: SELF_CHECK_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error === null && stdout === SELF_CHECK_OUTPUT) resolve(null);
      else
        resolve(
          (error?.message ?? `it printed ${JSON.stringify(stdout.slice(0, 80))}`) + stderr.slice(0, 200),
        );
    });
  });
}
