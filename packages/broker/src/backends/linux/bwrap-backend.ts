import type { SandboxPlan } from '@fs-sandbox/policy';
import { type HelperRuntime, helperScript, type LaunchSpec, type SandboxBackend } from '../backend.js';
import { buildBwrapSandbox, bwrapFactPaths, planShowsSysfs } from './bwrap-args.js';
import { locateBwrap } from './bwrap-locate.js';
import { collectPathFacts, cpuThermalThrottlePaths, expandDenyGlobs, planMayShow } from './path-facts.js';
import { syscallFilterProgram } from './syscall-filter.js';

export interface BwrapBackendOptions {
  /** Where FS_SANDBOX_BWRAP is read from (defaults to the broker's environment). */
  env?: Record<string, string | undefined>;
  /** Why bwrap (linux-backend-choice.ts), carried into each launch for `explain`. */
  reason?: string;
}

/** The Linux backend: host facts first, then the pure argv builder, then bwrap found on a sanitised PATH. */
export function createBwrapBackend(options: BwrapBackendOptions = {}): SandboxBackend {
  const env = options.env ?? process.env;
  return {
    name: 'bwrap',
    os: 'linux',
    witnessesHostReads: true,
    async prepare(plan: SandboxPlan, runtime: HelperRuntime): Promise<LaunchSpec> {
      const writableRoots = plan.writableRoots.map((root) => root.root);
      const globMatches = expandDenyGlobs(plan.denyGlobs, planMayShow(plan));
      const cpuKernelPaths = planShowsSysfs(plan) ? cpuThermalThrottlePaths() : [];
      const facts = await collectPathFacts(
        bwrapFactPaths(plan, runtime, globMatches, cpuKernelPaths),
        writableRoots,
        globMatches,
        cpuKernelPaths,
      );
      const sandbox = buildBwrapSandbox(plan, facts, runtime);
      const bwrap = await locateBwrap(env, [...writableRoots, ...facts.writableRootRealPaths]);
      return {
        backend: 'bwrap',
        sandboxProgram: bwrap,
        sandboxArgs: sandbox.args,
        // The runtime files are bound at their own paths, so the sandbox names them as the host does.
        runtime: runtime.executable.path,
        runtimeKind: runtime.executable.kind,
        runtimeArgs: [],
        helper: helperScript(runtime),
        helperArgs: [],
        mountPoints: sandbox.mountPoints,
        cwd: sandbox.cwd,
        boundRoots: sandbox.boundRoots,
        // bwrap itself gets only the filtered environment too: LD_PRELOAD and friends from the
        // broker must not act on the sandbox builder either.
        env: runtime.env,
        denyGlobMatches: globMatches,
        ...(options.reason === undefined ? {} : { reason: options.reason }),
        inputs: {
          firstFd: sandbox.firstInputFd,
          seccomp: syscallFilterProgram(sandbox.syscalls),
          emptyInputs: sandbox.emptyInputs,
        },
      };
    },
  };
}
