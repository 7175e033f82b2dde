import type { SandboxPlan } from '@fs-sandbox/policy';
import { type HelperRuntime, type LaunchSpec, NODE_EMPTY_OPENSSL_CONFIG } from '../backend.js';
import { resolveMacosTopLevelAlias } from './macos-path-aliases.js';
import { buildSeatbeltProfile } from './seatbelt-profile.js';

/**
 * Only the system copy: a `sandbox-exec` found on PATH could be anything the caller's environment
 * points at, and replacing /usr/bin itself already needs root.
 */
export const SANDBOX_EXEC_PATH = '/usr/bin/sandbox-exec';

/**
 * The `sandbox-exec` launch that runs the helper under the plan: `-p <profile>`, one `-D KEY=VALUE`
 * per path parameter, `--`, then node (with NODE_EMPTY_OPENSSL_CONFIG) and the helper bundle. Pure, so
 * `fs-sandbox explain` and the golden tests can build it on any OS. Nothing is mounted: Seatbelt
 * judges every access by path when it happens, so a warm helper has no view to go stale.
 */
export function buildSeatbeltLaunch(plan: SandboxPlan, runtime: HelperRuntime): LaunchSpec {
  const profile = buildSeatbeltProfile(plan, runtime);
  const defines = profile.params.flatMap(([key, value]) => ['-D', `${key}=${value}`]);
  return {
    backend: 'seatbelt',
    sandboxProgram: SANDBOX_EXEC_PATH,
    sandboxArgs: ['-p', profile.text, ...defines, '--'],
    runtime: resolveMacosTopLevelAlias(runtime.executable.path),
    runtimeKind: runtime.executable.kind,
    runtimeArgs: [...NODE_EMPTY_OPENSSL_CONFIG],
    helper: resolveMacosTopLevelAlias(runtime.helperBundle),
    helperArgs: [],
    mountPoints: [],
    boundRoots: [],
    // sandbox-exec passes its environment on unchanged; the runtime's is already the allowlist.
    env: { ...runtime.env },
    details: { profile: profile.text, params: Object.fromEntries(profile.params) },
  };
}
