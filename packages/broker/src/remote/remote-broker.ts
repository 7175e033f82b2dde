import {
  descriptorOf,
  FsError,
  type HostOs,
  parseParams,
  type ResultOf,
  type SandboxContext,
} from '@fs-sandbox/policy';
import { type Broker, type CallInfo, type CallOptions, type FsMethod, isFsMethod } from '../broker-api.js';
import { routeFor } from '../core/routing.js';
import { type RemoteCommands, remoteCommands } from './remote-commands.js';
import { RpcClient } from './rpc-client.js';
import { type StdioCommand, stdioTransport, webSocketTransport } from './transports.js';

/**
 * The typed `Broker` API of `createBroker`, served by a remote exec-server: moving a harness's file
 * operations to another machine is one line. Params go out as the wire has them (the server checks
 * them, once); file bytes come back as Buffers, as from the local broker; errors are the same
 * FsErrors, with `connection_lost` for a connection that ended. Commands (`run`, `spawn`) run on the
 * server under its policy, as process/start runs them; a `cwd` (or a context's) is required, since
 * this machine's working directory means nothing there.
 */
export interface RemoteBroker extends Broker, RemoteCommands {
  /** What the server said about itself in the handshake (`environmentInfo` and all). */
  readonly serverInfo: unknown;
}

export interface ConnectOptions {
  /** `ws://host:port` of `fs-sandbox serve --listen ws://…` (or another exec-server). */
  url: string;
  /** The server's bearer token (`serve --token-file`). */
  token?: string;
  /** Sent in `initialize` (default `fs-sandbox-remote`). */
  clientName?: string;
}

export interface SpawnOptions {
  /** The server program, e.g. `{ file: 'fs-sandbox', args: ['serve', '--listen', 'stdio'] }`. */
  command: StdioCommand;
  clientName?: string;
}

const DEFAULT_CLIENT_NAME = 'fs-sandbox-remote';

export async function connectBroker(options: ConnectOptions): Promise<RemoteBroker> {
  return open(new RpcClient(webSocketTransport(options.url, options.token), options.url), options.clientName);
}

export async function spawnBroker(options: SpawnOptions): Promise<RemoteBroker> {
  return open(new RpcClient(stdioTransport(options.command), options.command.file), options.clientName);
}

async function open(client: RpcClient, clientName = DEFAULT_CLIENT_NAME): Promise<RemoteBroker> {
  let serverInfo: unknown;
  try {
    serverInfo = await client.handshake(clientName);
  } catch (error) {
    await client.close();
    throw error;
  }
  const serverOs = platformOf(serverInfo);

  async function callWithInfo<M extends FsMethod>(
    method: M,
    params: unknown,
    options: CallOptions = {},
  ): Promise<{ result: ResultOf<M>; info: CallInfo }> {
    if (!isFsMethod(method)) throw new FsError('invalid_request', `unknown method \`${String(method)}\``);
    // Checked here too, so a bad request fails before a round trip with the error the server would
    // send, and the route its context takes on the server's OS is known.
    const { sandbox } = parseParams(method, params) as { sandbox?: SandboxContext | null };
    const sandboxed = routeFor(sandbox, serverOs).kind === 'sandbox';
    const wire = await client.request(method, params, options);
    return { result: withBuffers(method, wire), info: { sandboxed, backend: 'remote' } };
  }

  return {
    serverInfo,
    callWithInfo,
    async call(method, params, options) {
      return (await callWithInfo(method, params, options)).result;
    },
    ...remoteCommands(client),
    async explainAccess(params) {
      // The server's answer: its trust gate and host decide, as they would for the real call.
      return (await client.request('fs/explainAccess', params)) as ResultOf<'fs/explainAccess'>;
    },
    close: () => client.close(),
  };
}

/** The result's file bytes (base64 on the wire) as a Buffer, as the local broker returns them. */
function withBuffers<M extends FsMethod>(method: M, wire: unknown): ResultOf<M> {
  const field = descriptorOf(method).binary?.result;
  if (field === undefined || typeof wire !== 'object' || wire === null) return wire as ResultOf<M>;
  const value = (wire as Record<string, unknown>)[field];
  if (typeof value !== 'string') return wire as ResultOf<M>;
  return { ...wire, [field]: Buffer.from(value, 'base64') } as ResultOf<M>;
}

/** The server's OS as its handshake names it (the Codex exec-server and ours both say `platformOs`). */
function platformOf(serverInfo: unknown): HostOs {
  const os = (serverInfo as { environmentInfo?: { platformOs?: unknown } } | null)?.environmentInfo
    ?.platformOs;
  return os === 'macos' || os === 'windows' ? os : 'linux';
}
