import {
  CA_BUNDLE_VARIABLES,
  commandNetworkOf,
  FsError,
  type HostOs,
  type ManagedNetworkRequest,
  type ParsedParams,
  type PermissionProfile,
} from '@fs-sandbox/policy';
import { commandEnv } from './command-env.js';
import type { SandboxCommand } from './sandbox-runner.js';

/**
 * A command as process/start asks for it, its cwd native: the environment is built from `env` and
 * `envPolicy`.
 */
export interface CommandLaunchRequest {
  argv: string[];
  /** Native absolute path. */
  cwd: string;
  env: Record<string, string>;
  envPolicy?: ParsedParams<'process/start'>['envPolicy'];
  /** Run it on a pseudo-terminal of this size, allocated inside the sandbox (Bun helper only). */
  terminal?: { rows: number; cols: number } | null;
  /**
   * `process/start`'s `enforceManagedNetwork` and `managedNetwork`: the command's only way out is
   * then the client's own proxy on the host's loopback (policy's command-network.ts).
   */
  managedNetwork?: ManagedNetworkRequest;
}

const UNMANAGED: ManagedNetworkRequest = { enforce: false, context: null };

/**
 * A sandboxed command's network and environment. The environment is the request's (env-policy
 * rules, command-env.ts); a command with any network also inherits the broker's CA bundle
 * variables, and the files those name become readable in its sandbox: only the broker's own
 * values, never a path the request sets, which would otherwise be a way to have any host file
 * bound in.
 */
export function sandboxCommandOf(
  request: CommandLaunchRequest,
  profile: PermissionProfile,
  brokerEnv: Record<string, string | undefined>,
  os: HostOs,
): SandboxCommand {
  const plain = commandEnv(brokerEnv, request.envPolicy, request.env, os);
  const network = commandNetworkOf(profile, request.managedNetwork ?? UNMANAGED, plain, os);
  const command = { argv: request.argv, cwd: request.cwd, terminal: request.terminal ?? null, network };
  if (network.kind === 'none') return { ...command, env: plain, caFiles: [] };
  const env = commandEnv(brokerEnv, request.envPolicy, request.env, os, CA_BUNDLE_VARIABLES);
  return { ...command, env, caFiles: caFilesOf(env, brokerEnv) };
}

/**
 * A command the context runs without a sandbox (as the reference runs it). An allowlist, managed
 * networking or a list of unix sockets could not be enforced there: refused rather than run with
 * the whole network and every socket.
 */
export function unsandboxedCommandOf(
  request: CommandLaunchRequest,
  profile: PermissionProfile | null,
  brokerEnv: Record<string, string | undefined>,
  os: HostOs,
): { argv: string[]; cwd: string; env: Record<string, string> } {
  const why =
    request.managedNetwork?.enforce === true
      ? 'enforceManagedNetwork'
      : profile?.type === 'managed' && profile.network_domains != null
        ? 'network_domains'
        : profile?.type === 'managed' && (profile.unix_sockets ?? []).length > 0
          ? 'unix_sockets'
          : null;
  if (why !== null)
    throw new FsError(
      'sandbox_unavailable',
      `${why} needs a sandboxed command, and this context runs commands without a sandbox (no context, or a file system it does not restrict); refused rather than run with the whole network and every socket`,
      { kind: 'sandboxPreparation' },
    );
  return {
    argv: request.argv,
    cwd: request.cwd,
    env: commandEnv(brokerEnv, request.envPolicy, request.env, os, CA_BUNDLE_VARIABLES),
  };
}

/** The paths the broker's CA variables name, where the command got exactly the broker's value. */
function caFilesOf(env: Record<string, string>, brokerEnv: Record<string, string | undefined>): string[] {
  const files: string[] = [];
  for (const name of CA_BUNDLE_VARIABLES) {
    const value = brokerEnv[name];
    if (value === undefined || env[name] !== value) continue;
    // SSL_CERT_DIR and GIT_SSL_CAPATH may list several directories, as OpenSSL reads them.
    for (const path of value.split(':')) if (path.startsWith('/')) files.push(path);
  }
  return [...new Set(files)].sort();
}
