import { lstat, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { HelperRequest } from '@fs-sandbox/helper';
import { helperBundlePath } from '@fs-sandbox/helper/bundle-path';
import {
  FsError,
  filterHelperEnv,
  type HostOs,
  minimalReadRootCandidates,
  requestRunsRipgrep,
} from '@fs-sandbox/policy';
import type { HelperRuntime } from '../backends/backend.js';
import { ownCodePaths } from './own-code.js';
import {
  type ChosenRuntime,
  chooseRuntime,
  type HelperRuntimeChoice,
  requestedRuntime,
  type SelfCheckTiming,
} from './runtime-choice.js';

/** The helper runtime plus the platform minimal roots that exist on this host. */
export interface ResolvedHelperRuntime extends HelperRuntime {
  /** Which runtime was asked for and why this one runs (doctor, explain). */
  choice: Omit<ChosenRuntime, 'executable'>;
  minimalRootsPresent: string[];
  /** The broker's own installation (real paths), read-only in every sandbox whose writable roots hold it. */
  ownCode: string[];
}

/**
 * What the sandbox must let the helper read to run at all: the real runtime executable (node, or
 * the compiled Bun helper, see runtime-choice.ts) and the helper
 * bundle as exact files (not their folders, which may hold anything), and only the minimal
 * platform roots that exist. The environment is cut down to the allowlist here, once.
 */
export async function resolveHelperRuntime(
  os: HostOs,
  env: Record<string, string | undefined>,
  bundlePath?: string,
  runtimeChoice?: HelperRuntimeChoice,
  selfCheck: SelfCheckTiming = 'now',
): Promise<ResolvedHelperRuntime> {
  const helperEnv = filterHelperEnv(env, os);
  const { executable, ...choice } = await chooseRuntime(
    requestedRuntime(runtimeChoice, env),
    os,
    helperEnv,
    () => bundlePath ?? helperBundlePath(env, 'bun'),
    process.arch,
    selfCheck,
  );
  let helperBundle: string;
  try {
    // The Bun helper is an executable: program and runtime are one file.
    helperBundle =
      executable.kind === 'bun'
        ? executable.path
        : await realpath(bundlePath ?? helperBundlePath(env, 'node'));
  } catch (error) {
    // No bundle means no sandboxed helper: a typed refusal, never an in-process fallback.
    const why = error instanceof Error ? error.message : String(error);
    throw new FsError(
      'sandbox_unavailable',
      `the helper bundle cannot be found (${why}); run \`pnpm run build\``,
    );
  }
  const present = await Promise.all(
    minimalReadRootCandidates(os).map(async (root) => ((await exists(root)) ? root : null)),
  );
  const ripgrepPath = await resolveRipgrep();
  return {
    executable,
    choice,
    helperBundle,
    ripgrepPath,
    env: helperEnv,
    minimalRootsPresent: present.filter((root): root is string => root !== null),
    ownCode: ownCodePaths(helperBundle, executable.path, ripgrepPath),
  };
}

/**
 * The real path of `@vscode/ripgrep`'s binary for this platform (its per-platform optional
 * package), or null when it is not installed: only fs/search and fs/glob need it, and they refuse
 * with `sandbox_unavailable` then. Never looked up on PATH.
 */
export async function resolveRipgrep(): Promise<string | null> {
  try {
    // The binary @vscode/ripgrep itself names (its lib/index.js: `bin/rg` of its package for this
    // platform, resolved from it), found without importing it: it is an ES module, and importing
    // one from the CLI's CommonJS bundle starts node's ES module loader (~4 ms of CPU) for every
    // sandboxed call.
    const ripgrep = createRequire(import.meta.url).resolve('@vscode/ripgrep');
    const binary = process.platform === 'win32' ? 'rg.exe' : 'rg';
    const platformPackage = `@vscode/ripgrep-${process.platform}-${process.arch}`;
    return await realpath(createRequire(ripgrep).resolve(`${platformPackage}/bin/${binary}`));
  } catch {
    return null;
  }
}

/**
 * Whether a request runs ripgrep (the method table's `runsRipgrep`: a search or a glob, or a batch
 * holding one): its request carries ripgrep's path (see the helper's protocol.ts).
 */
export function runsRipgrep(request: HelperRequest): boolean {
  return requestRunsRipgrep(request.operation, request.params);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
