import type { LaunchSpec } from '../backends/backend.js';

/** Backends whose launch ends in `-- <node> <helper bundle> [helper arguments]`. */
const NODE_AFTER_SEPARATOR: ReadonlySet<LaunchSpec['backend']> = new Set(['bwrap', 'seatbelt']);

/**
 * The launch of a warm spare: the same sandbox, with node told to compile every function of the
 * helper up front (`--no-lazy`). A spare does that while it waits for a request; otherwise V8
 * compiles each function on its first call, between the request and the reply (about 2 ms of a warm
 * call, measured by bench/run.mjs). A cold start would only pay more for it, so it keeps V8's lazy
 * default. The pool key is taken from the request's launch, not from this one.
 */
export function spareLaunch(launch: LaunchSpec): LaunchSpec {
  if (!NODE_AFTER_SEPARATOR.has(launch.backend)) return launch;
  // The last `--`: everything after it is node, the bundle and the helper's own (absolute path) args.
  const separator = launch.args.lastIndexOf('--');
  if (separator === -1 || separator + 1 >= launch.args.length) return launch;
  const args = [...launch.args];
  args.splice(separator + 2, 0, '--no-lazy');
  return { ...launch, args };
}
