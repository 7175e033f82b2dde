import type { ChildProcess } from 'node:child_process';
import { Server } from 'node:net';
import { FsError, LIMITS, type NetworkAllowlist } from '@fs-sandbox/policy';

/**
 * How a command in its own network namespace gets a way out without a process of ours inside and
 * without unix sockets (which the sandbox's seccomp filter refuses to create).
 *
 * A listening TCP socket belongs to the namespace it was created in, wherever its descriptor goes
 * later. So the sandbox starts with a short set-up step, before the command: node, with an empty
 * environment, listens on 127.0.0.1 at each port inside the new namespace and sends those listening
 * sockets to the broker over an inherited channel (node's IPC, a socketpair the broker made; the
 * descriptors travel as SCM_RIGHTS, no socket() call inside), then exits. The shell that ran it
 * closes the channel, sets the command's environment and execs the command. From then on:
 *
 * - the command sees a plain proxy on 127.0.0.1 (`HTTP_PROXY`, `ALL_PROXY`), and its namespace has
 *   no other way out: no route, no other interface;
 * - the broker accepts its connections directly on those sockets (command-proxy.ts): no bridge
 *   process runs inside while the command runs, nothing is copied twice, and no file is made on
 *   the host;
 * - the command never holds the channel (closed before exec) and never runs before the listeners
 *   are in the broker's hands (the exec waits for the set-up step to exit).
 *
 * The set-up step runs with an empty environment (bwrap's `--clearenv`; the command's variables are
 * handed to the shell as arguments and exported only after it): no `NODE_OPTIONS`, `LD_PRELOAD`
 * or other variable of the command can run code while the channel to the broker is open.
 */

/** The ports the proxy listens on inside the namespace, the usual HTTP-proxy and SOCKS ports. */
export const PROXY_PORTS = { http: 3128, socks: 1080 } as const;

export type ListenerUse = 'http-proxy' | 'socks-proxy' | 'forward' | 'unix-relay';

/** What a command launch needs for its network, beside bwrap's arguments. */
export interface NetworkLaunch {
  /** The descriptor number of the channel in the sandbox (the spawn's stdio index for `ipc`). */
  channelFd: number;
  /** `target`: for a `unix-relay`, the host socket's real path (unix-relay.ts). */
  listeners: Array<{ port: number; use: ListenerUse; target?: string }>;
  /** What the proxy lets through; null when every listener is a forward (managed networking). */
  allowlist: NetworkAllowlist | null;
}

/** The set-up step's program (`node -e`), given the ports as arguments. */
const SETUP_SOURCE = [
  "const net=require('net');",
  'const ports=process.argv.slice(1).map(Number);',
  'let left=ports.length;',
  'for(const port of ports){',
  'const server=net.createServer();',
  "server.on('error',(error)=>{process.stderr.write('fs-sandbox: the network set-up cannot listen on 127.0.0.1:'+port+': '+error.message+'\\n');process.exit(125);});",
  "server.listen({port,host:'127.0.0.1',exclusive:true},()=>process.send({port},server,()=>{if(--left===0)process.exit(0);}));",
  '}',
].join('');

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * What the shell may add to the environment it execs with, and what node's spawn gives a child
 * with a channel (bwrap clears those, a launch without it would not): removed unless the command
 * sets them itself.
 */
const NOT_THE_COMMANDS = [
  'PWD',
  'OLDPWD',
  'SHLVL',
  '_',
  'NODE_CHANNEL_FD',
  'NODE_CHANNEL_SERIALIZATION_MODE',
];

/**
 * The argv that runs inside the sandbox in place of the command's: `sh -c SCRIPT` with the node
 * executable, the set-up program, the command's variable values and its argv as arguments (never
 * spliced into the script, which holds only the validated variable names and our own numbers).
 */
export function networkLauncherArgv(
  shell: string,
  node: string,
  network: NetworkLaunch,
  env: Readonly<Record<string, string>>,
  argv: readonly string[],
): string[] {
  if (!Number.isInteger(network.channelFd) || network.channelFd < 3 || network.channelFd > 9)
    throw new FsError(
      'internal_error',
      `the network channel must be descriptor 3..9, not ${network.channelFd}`,
    );
  const names = Object.keys(env).sort();
  for (const name of names)
    if (!ENV_NAME.test(name))
      throw new FsError(
        'invalid_params',
        `cannot build the sandbox: bad environment name ${JSON.stringify(name)}`,
      );
  const fd = network.channelFd;
  const ports = network.listeners.map((listener) => String(listener.port)).join(' ');
  // $1 node, $2 the set-up program, then one value per name, then the command's argv.
  const exports = names.map((name, index) => `${name}="\${${index + 3}}"`).join(' ');
  const unset = NOT_THE_COMMANDS.filter((name) => !Object.hasOwn(env, name));
  const script = [
    `NODE_CHANNEL_FD=${fd} "$1" -e "$2" ${ports} </dev/null || exit 125`,
    `exec ${fd}>&-`,
    ...(exports === '' ? [] : [`export ${exports}`]),
    `shift ${names.length + 2}`,
    ...(unset.length === 0 ? [] : [`unset ${unset.join(' ')}`]),
    'exec "$@"',
  ].join('\n');
  return [
    shell,
    '-c',
    script,
    'fs-sandbox-network',
    node,
    SETUP_SOURCE,
    ...names.map((name) => env[name] as string),
    ...argv,
  ];
}

/**
 * The listening sockets the set-up step sends, by port, once all have come. Anything else on the
 * channel, the step ending first, or no answer within LIMITS.networkSetupTimeoutMs refuses the
 * launch (`sandbox_unavailable`); the channel is closed either way, so nothing more is read from it.
 */
export function receiveListeners(child: ChildProcess, network: NetworkLaunch): Promise<Map<number, Server>> {
  const expected = new Set(network.listeners.map((listener) => listener.port));
  const received = new Map<number, Server>();
  return new Promise((resolve, reject) => {
    const finish = (error: FsError | null) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (child.connected) child.disconnect();
      if (error === null) {
        resolve(received);
        return;
      }
      for (const server of received.values()) server.close();
      reject(error);
    };
    const refuse = (why: string) =>
      finish(
        new FsError('sandbox_unavailable', `the network set-up inside the sandbox ${why}`, {
          kind: 'sandboxPreparation',
        }),
      );
    const onMessage = (message: unknown, handle: unknown) => {
      const port = (message as { port?: unknown } | null)?.port;
      if (
        !(handle instanceof Server) ||
        typeof port !== 'number' ||
        !expected.has(port) ||
        received.has(port)
      ) {
        if (handle instanceof Server) handle.close();
        refuse('sent something other than its listening sockets');
        return;
      }
      received.set(port, handle);
      if (received.size === expected.size) finish(null);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      refuse(`ended (${signal ?? `exit ${code}`}) before handing over its listening sockets`);
    const timer = setTimeout(
      () => refuse(`handed over no listening sockets within ${LIMITS.networkSetupTimeoutMs / 1000} s`),
      LIMITS.networkSetupTimeoutMs,
    );
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
