import type { LaunchSpec } from '../../src/backends/backend.js';

/**
 * A launch with no sandbox of its own: `sandboxProgram` runs `runtime helper` directly (env(1)
 * execs node, so the pid is the helper's), nothing bound, nothing to check for freshness.
 */
export function directLaunch(parts: {
  sandboxProgram: string;
  runtime: string;
  helper: string;
  backend?: LaunchSpec['backend'];
  env?: Record<string, string>;
}): LaunchSpec {
  return {
    backend: parts.backend ?? 'bwrap',
    sandboxProgram: parts.sandboxProgram,
    sandboxArgs: [],
    runtime: parts.runtime,
    runtimeKind: 'node',
    runtimeArgs: [],
    helper: parts.helper,
    helperArgs: [],
    mountPoints: [],
    boundRoots: [],
    env: parts.env ?? {},
  };
}
