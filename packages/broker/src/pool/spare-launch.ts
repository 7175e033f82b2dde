import { WARM_UP_FLAG } from '@fs-sandbox/helper';
import type { LaunchSpec } from '../backends/backend.js';

/**
 * The launch of a warm spare: the same sandbox, with node told to compile every function of the
 * helper up front (`--no-lazy`) and the helper told to rehearse its request path (`--warm-up`, see
 * the helper's warm-up.ts). A spare does both while it waits; otherwise V8 compiles each function
 * on its first call and runs it cold, between the request and the reply (together about 3 ms of a
 * warm call, measured by bench/run.mjs). A cold start would only pay more for them, so it keeps
 * node's defaults. Bun has no such flag (its JIT tiers up on its own), so a Bun spare only
 * rehearses. The pool key is taken from the request's launch, not from this one.
 */
export function spareLaunch(launch: LaunchSpec): LaunchSpec {
  return {
    ...launch,
    runtimeArgs: launch.runtimeKind === 'node' ? [...launch.runtimeArgs, '--no-lazy'] : launch.runtimeArgs,
    helperArgs: [...launch.helperArgs, WARM_UP_FLAG],
  };
}
