import {
  buildSandboxPlan,
  FsError,
  filterHelperEnv,
  type HostOs,
  minimalReadRootCandidates,
  type SandboxContext,
  type SandboxPlan,
  widenForHelperRuntime,
} from '@fs-sandbox/policy';
import type { HelperRuntime, LaunchSpec } from '../backends/backend.js';
import { buildSeatbeltLaunch } from '../backends/macos/seatbelt-launch.js';
import { createWindowsBackend } from '../backends/windows/restricted-token-backend.js';
import { routeFor } from '../routing.js';

/**
 * `fs-sandbox explain --platform` for an OS other than this host: the same resolution, widening and
 * plan as a real run, handed to that platform's pure command builder. What cannot be known from
 * here is assumed and said so: the runtime paths are the usual install locations and every minimal
 * root is taken to exist. Linux needs the host's own facts (bwrap reads the tree), so it is
 * explained on Linux only.
 */
const ASSUMED_RUNTIME: Record<Exclude<HostOs, 'linux'>, Omit<HelperRuntime, 'env'>> = {
  macos: {
    nodePath: '/usr/local/bin/node',
    helperBundle:
      '/usr/local/lib/node_modules/@fs-sandbox/broker/node_modules/@fs-sandbox/helper/dist/helper.cjs',
  },
  windows: {
    nodePath: 'C:\\Program Files\\nodejs\\node.exe',
    helperBundle: 'C:\\Program Files\\fs-sandbox\\node_modules\\@fs-sandbox\\helper\\dist\\helper.cjs',
  },
};
const ASSUMED_WINDOWS_LAUNCHER =
  'C:\\Program Files\\fs-sandbox\\node_modules\\@fs-sandbox\\broker\\dist\\windows-launcher.js';

export interface ForeignExplanation {
  plan: SandboxPlan;
  launch: LaunchSpec;
  assumptions: string[];
}

export async function explainForPlatform(
  context: SandboxContext | null,
  platform: HostOs,
  env: Record<string, string | undefined>,
): Promise<ForeignExplanation> {
  if (platform === 'linux') {
    throw new FsError(
      'sandbox_unavailable',
      'the bwrap command depends on the host tree; explain it on a linux host',
    );
  }
  const route = routeFor(context, platform);
  if (route.kind === 'in-process') {
    throw new FsError(
      'invalid_params',
      `this context does not need a sandbox (${route.reason}); it runs in-process`,
    );
  }
  const runtime: HelperRuntime = { ...ASSUMED_RUNTIME[platform], env: filterHelperEnv(env, platform) };
  const profile = widenForHelperRuntime(route.context.profile, {
    os: platform,
    helperFiles: [runtime.nodePath, runtime.helperBundle],
    minimalRootsPresent: minimalReadRootCandidates(platform),
  });
  const plan = buildSandboxPlan({ ...route.context, profile }, platform);
  const assumptions = [
    `runtime paths are assumed (node ${runtime.nodePath}, helper ${runtime.helperBundle})`,
    `every ${platform} minimal root is assumed to exist`,
  ];
  if (platform === 'macos') return { plan, launch: buildSeatbeltLaunch(plan, runtime), assumptions };
  const backend = createWindowsBackend(route.context.windowsSandboxLevel, {
    locateLauncher: () => ASSUMED_WINDOWS_LAUNCHER,
  });
  return {
    plan,
    launch: await backend.prepare(plan, runtime),
    assumptions: [...assumptions, `the Windows launcher is assumed at ${ASSUMED_WINDOWS_LAUNCHER}`],
  };
}
