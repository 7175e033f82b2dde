import type { SandboxPlan } from '@fs-sandbox/policy';
import { decodePathBytes, FsError, pathStartsWith } from '@fs-sandbox/policy/core';
import * as host from '../../runner/host-reads.js';
import {
  FIRST_LAUNCH_INPUT_FD,
  type HelperRuntime,
  helperScript,
  type LaunchSpec,
  NODE_EMPTY_OPENSSL_CONFIG,
  runtimeFiles,
  type SandboxBackend,
} from '../backend.js';
import { buildLandlockRules, type LandlockHostView } from './landlock-rules.js';
import { landlockLauncherPath } from './linux-backend-choice.js';
import { expandDenyGlobs, planMayShow } from './path-facts.js';
import { landlockFilterProgram } from './syscall-filter.js';

/**
 * What the Landlock backend cannot give that bwrap gives, shown by `explain` with every launch
 * (docs/security.md "Landlock backend" has the reasons).
 */
export const LANDLOCK_DIFFERENCES: readonly string[] = [
  'no private /proc: host processes are listed (their memory, environment and descriptors stay closed by Landlock ptrace scoping)',
  'no private /tmp or /: paths are the host paths, denied by rules fixed at sandbox start',
  'metadata (stat: existence, size, mode, times) of any path is answered: Landlock does not govern it; content is refused',
  'no pid namespace: a process that detaches may outlive its command (signals to host processes are refused)',
  'in a directory holding a denied or read-only path, entries created after the sandbox started are out of reach, and nothing new can be made directly in it (the helper may beside a denied path: its guard refuses the path itself)',
  "commands: a writable root's top-level .git is read-only (git add and git commit there fail)",
  'commands: no terminal (no private devpts) and no network allowlist or managed proxy (no network namespace)',
];

/**
 * The Linux backend without namespaces: the launcher (the Bun helper's `--landlock` mode) restricts
 * itself with the rules landlock-rules.ts derives from the plan, loads the seccomp filter, drops
 * every capability and then executes the helper (or a command) at its host path.
 */
export function createLandlockBackend(reason: string): SandboxBackend {
  return {
    name: 'landlock',
    os: 'linux',
    witnessesHostReads: true,
    async prepare(plan: SandboxPlan, runtime: HelperRuntime): Promise<LaunchSpec> {
      const launcher = landlockLauncherPath();
      const real = decodePathBytes(host.realpath(launcher));
      // The launcher builds every later sandbox: one a sandbox could rewrite would not be one.
      const inside = plan.writableRoots.find((root) => pathStartsWith('linux', real, root.root));
      if (inside !== undefined)
        throw new FsError(
          'sandbox_unavailable',
          `the Landlock launcher ${real} lies inside the writable root ${inside.root}; refusing to use a program the sandbox could replace`,
        );
      const globMatches = expandDenyGlobs(plan.denyGlobs, planMayShow(plan));
      const { rules, cwd } = buildLandlockRules(plan, runtimeFiles(runtime), globMatches, hostView, {
        command: plan.command === true,
      });
      const args = ['--landlock', '--seccomp-fd', String(FIRST_LAUNCH_INPUT_FD)];
      for (const rule of rules) args.push('--rule', String(rule.mask), rule.path);
      // TCP bind and connect are refused by Landlock too when there is no network (ABI 4).
      if (plan.network !== true) args.push('--no-tcp');
      args.push('--drop-caps', '--chdir', cwd, '--clearenv');
      for (const name of Object.keys(runtime.env).sort())
        args.push('--setenv', name, runtime.env[name] as string);
      args.push('--');
      return {
        backend: 'landlock',
        sandboxProgram: real,
        sandboxArgs: args,
        runtime: runtime.executable.path,
        runtimeKind: runtime.executable.kind,
        runtimeArgs: runtime.executable.kind === 'node' ? [...NODE_EMPTY_OPENSSL_CONFIG] : [],
        helper: helperScript(runtime),
        helperArgs: [],
        // Nothing is mounted and the helper sees the host's own tree, so a warm helper has no view
        // of its own to find stale: a root the host replaced since is simply out of reach (the
        // rules hold the objects that existed at start).
        mountPoints: [],
        boundRoots: [],
        cwd,
        env: {},
        denyGlobMatches: globMatches,
        reason,
        details: { landlockRules: rules.length, differences: LANDLOCK_DIFFERENCES },
        inputs: {
          firstFd: FIRST_LAUNCH_INPUT_FD,
          seccomp: landlockFilterProgram({ network: plan.network === true }),
          emptyInputs: 0,
        },
      };
    },
  };
}

/** The host as the rule builder sees it, through the journaled reads (a rebuild is skipped only while they hold). */
const hostView: LandlockHostView = {
  real(path) {
    try {
      return decodePathBytes(host.realpath(path));
    } catch {
      return null;
    }
  },
  isDirectory(real) {
    try {
      return host.lstat(real).isDirectory();
    } catch {
      return false;
    }
  },
  children(real) {
    return host
      .readdirTyped(real)
      .map((entry) => ({ name: decodePathBytes(entry.name), symlink: entry.isSymbolicLink() }));
  },
};
