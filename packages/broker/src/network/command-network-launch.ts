import { realpathSync } from 'node:fs';
import type { CommandNetwork } from '@fs-sandbox/policy';
import { LAUNCH_CHANNEL_FD } from '../backends/backend.js';
import { type NetworkLaunch, networkLauncherArgv, PROXY_PORTS } from './sandbox-listeners.js';
import { UNIX_RELAY_VARIABLE, type UnixSocketRelay, unixRelayPorts } from './unix-relay.js';

/** The programs the network set-up step runs inside the sandbox, by their real paths. */
export interface LauncherPrograms {
  shell: string;
  node: string;
}

/**
 * This host's: the shell `/bin/sh` stands for, and the node running the broker (the set-up step
 * needs node's IPC, which the compiled Bun helper does not offer). Real paths, so the sandbox needs
 * to show the files themselves and none of the links that lead to them.
 */
export function hostLauncherPrograms(): LauncherPrograms {
  return { shell: realpathSync('/bin/sh'), node: realpathSync(process.execPath) };
}

/** The variables that send a command's clients to the broker's proxy; `NO_PROXY` is empty so nothing bypasses it. */
export function proxyVariables(): Record<string, string> {
  const http = `http://127.0.0.1:${PROXY_PORTS.http}`;
  const socks = `socks5h://127.0.0.1:${PROXY_PORTS.socks}`;
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    // socks5h: the proxy resolves names, as the namespace has no DNS of its own.
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: '',
    no_proxy: '',
    // Node 22.21+ and 24 honour the variables in fetch() and http only when asked to.
    NODE_USE_ENV_PROXY: '1',
  };
}

export interface CommandNetworkLaunchPlan {
  launch: NetworkLaunch;
  /** The command's environment with the proxy variables (they win over the command's own). */
  env: Record<string, string>;
  /** What runs inside the sandbox: the set-up step, then the command. */
  argv: string[];
  /** Files the sandbox must show for the set-up step: the shell and node. */
  reads: string[];
}

/**
 * The launch of a command whose way out is through the broker, or null when its network needs
 * no set-up step (none at all and no unix socket relayed, or the host's). `relays` are the
 * command's `unixSockets` as resolved when it starts (unix-relay.ts).
 */
export function commandNetworkLaunch(
  command: { network: CommandNetwork; env: Record<string, string>; argv: string[] },
  programs: LauncherPrograms = hostLauncherPrograms(),
  relays: readonly UnixSocketRelay[] = [],
): CommandNetworkLaunchPlan | null {
  const { network } = command;
  if (network.kind === 'host' || (network.kind === 'none' && relays.length === 0)) return null;
  const ways: NetworkLaunch['listeners'] =
    network.kind === 'proxy'
      ? [
          { port: PROXY_PORTS.http, use: 'http-proxy' },
          { port: PROXY_PORTS.socks, use: 'socks-proxy' },
        ]
      : network.kind === 'managed'
        ? network.loopbackPorts.map((port) => ({ port, use: 'forward' }))
        : [];
  const ports = unixRelayPorts(
    relays.length,
    ways.map((listener) => listener.port),
  );
  const relayed = relays.map((relay, index) => ({
    port: ports[index] as number,
    use: 'unix-relay' as const,
    target: relay.target,
  }));
  // The channel is the spawn's first descriptor after stdio (the launch inputs follow it).
  const launch: NetworkLaunch = {
    channelFd: LAUNCH_CHANNEL_FD,
    listeners: [...ways, ...relayed],
    allowlist: network.kind === 'proxy' ? network.allowlist : null,
  };
  const relayVariable: Record<string, string> =
    relays.length === 0
      ? {}
      : {
          [UNIX_RELAY_VARIABLE]: JSON.stringify(
            Object.fromEntries(relays.map((relay, index) => [relay.path, `127.0.0.1:${ports[index]}`])),
          ),
        };
  const env = {
    ...command.env,
    ...(network.kind === 'proxy' ? proxyVariables() : {}),
    ...relayVariable,
  };
  return {
    launch,
    env,
    argv: networkLauncherArgv(programs.shell, programs.node, launch, env, command.argv),
    reads: [programs.shell, programs.node],
  };
}
