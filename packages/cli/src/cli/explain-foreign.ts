import {
  createSeatbeltBackend,
  createWindowsBackend,
  type HelperRuntime,
  type PreparedLaunch,
  type ResolvedHelperRuntime,
  resolveMacosTopLevelAlias,
  routeFor,
  SANDBOX_EXEC_PATH,
  type SandboxBackend,
  SandboxRunner,
} from '@fs-sandbox/broker/internal';
import {
  FsError,
  filterHelperEnv,
  type HostOs,
  minimalReadRootCandidates,
  type SandboxContext,
  type SandboxedContext,
} from '@fs-sandbox/policy';

/**
 * `fs-sandbox explain --platform` for an OS other than this host: the runner's own preparation
 * (resolution, widening, plan, that platform's backend) with the other host's files, which cannot
 * be read from here, replaced by stated assumptions: the runtime paths are the usual install
 * locations, every minimal root exists, and the backend's own checks of the machine pass. Linux
 * needs the host's own facts (bwrap reads the tree), so it is explained on Linux only.
 */
const ASSUMED_RUNTIME: Record<Exclude<HostOs, 'linux'>, Omit<HelperRuntime, 'env'>> = {
  macos: {
    executable: { kind: 'node', path: '/usr/local/bin/node' },
    helperBundle:
      '/usr/local/lib/node_modules/@fs-sandbox/broker/node_modules/@fs-sandbox/helper/dist/helper.cjs',
    ripgrepPath:
      '/usr/local/lib/node_modules/@fs-sandbox/broker/node_modules/@vscode/ripgrep-darwin-arm64/bin/rg',
  },
  windows: {
    executable: { kind: 'node', path: 'C:\\Program Files\\nodejs\\node.exe' },
    helperBundle: 'C:\\Program Files\\fs-sandbox\\node_modules\\@fs-sandbox\\helper\\dist\\helper.cjs',
    ripgrepPath: 'C:\\Program Files\\fs-sandbox\\node_modules\\@vscode\\ripgrep-win32-x64\\bin\\rg.exe',
  },
};
const ASSUMED_WINDOWS_LAUNCHER =
  'C:\\Program Files\\fs-sandbox\\node_modules\\@fs-sandbox\\broker\\dist\\windows-launcher.js';

export interface ForeignExplanation extends PreparedLaunch {
  assumptions: string[];
}

/** A platform's backend with its reads of the machine replaced by what is assumed of it. */
interface AssumedBackend {
  backendFor(context: SandboxedContext): SandboxBackend;
  assumptions: string[];
}

const ASSUMED_BACKENDS: Record<Exclude<HostOs, 'linux'>, AssumedBackend> = {
  macos: {
    backendFor: () =>
      createSeatbeltBackend({
        checkSandboxExec: async () => {},
        // Every path exists as spelled: its real path is the spelling the profile uses anyway.
        paths: {
          realpath: async (path) => resolveMacosTopLevelAlias(path),
          profileSpelling: resolveMacosTopLevelAlias,
        },
      }),
    assumptions: [
      `${SANDBOX_EXEC_PATH} is assumed to be there`,
      "no path of the plan is assumed to cross a symlink other than macOS's own /tmp, /var and /etc",
    ],
  },
  windows: {
    backendFor: (context) =>
      createWindowsBackend(context.windowsSandboxLevel, { locateLauncher: () => ASSUMED_WINDOWS_LAUNCHER }),
    assumptions: [`the Windows launcher is assumed at ${ASSUMED_WINDOWS_LAUNCHER}, with koffi installed`],
  },
};

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
  const runtime: ResolvedHelperRuntime = {
    ...ASSUMED_RUNTIME[platform],
    env: filterHelperEnv(env, platform),
    minimalRootsPresent: minimalReadRootCandidates(platform),
    ownCode: [],
    choice: { requested: 'node', reason: `the ${platform} sandbox runs the helper under node` },
  };
  const backend = ASSUMED_BACKENDS[platform];
  const runner = new SandboxRunner({
    os: platform,
    backendFor: backend.backendFor,
    runtime: async () => runtime,
    launcher: async () => {
      throw new FsError('internal_error', 'explain never runs a helper');
    },
    // Neither `.git` pointer files nor the broker's installation can be looked at on that host.
    protectHostPaths: (plan) => ({ plan, extra: new Map(), unmounted: new Map(), home: null }),
  });
  const { plan, launch } = await runner.prepareLaunch(route.context);
  return {
    plan,
    launch,
    assumptions: [
      `runtime paths are assumed (node ${runtime.executable.path}, helper ${runtime.helperBundle}, ripgrep ${runtime.ripgrepPath})`,
      `every ${platform} minimal root is assumed to exist`,
      'no writable root is assumed to hold a `.git` pointer file or fs-sandbox itself (their extra read-only paths come from the host)',
      ...backend.assumptions,
    ],
  };
}
