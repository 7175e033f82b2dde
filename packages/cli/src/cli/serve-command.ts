import type { Readable, Writable } from 'node:stream';
import type { FsBroker } from '@fs-sandbox/broker/internal';
import { type Command, InvalidArgumentError } from 'commander';
import { type AuditSink, FileAuditLog } from '../server/audit-log.js';
import { describeEnvironment } from '../server/handshake.js';
import { parseListenAddress } from '../server/listen-address.js';
import { parseAllowedOrigin } from '../server/origin-check.js';
import { createServer, type FsRpcServer, SERVER_DEFAULTS } from '../server/server.js';
import type { ProtocolSurface } from '../server/surface.js';
import { loadToken } from '../server/token-auth.js';
import {
  addBrokerOptions,
  addProcessLimitOption,
  addRequireSandboxOption,
  addUntrustedOption,
  type BrokerFlags,
  brokerOptionsFrom,
} from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { type ContextFlags, collect } from './context-options.js';
import { addPoolOptions, type PoolFlags, poolOptionsFrom } from './pool-flags.js';
import { addServerPolicyOptions, type ServerPolicy, serverPolicyFrom } from './server-policy.js';
import { escapeForTerminal } from './terminal-text.js';

export interface ServeFlags extends BrokerFlags, PoolFlags {
  listen: string;
  tokenFile?: string;
  allowRemote?: boolean;
  allowOrigin: string[];
  maxMessageBytes: number;
  maxUnsentBytes: number;
  maxUnsentBytesTotal: number;
  maxConnections: number;
  concurrency: number;
  auditLog?: string;
  auditRawPaths?: boolean;
  stats?: boolean;
}

function positiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError('expected a positive integer');
  return value;
}

/** Bad usage of a server command (exit 2), not a failure of the server. */
export class UsageError extends Error {}

function printStats(server: FsRpcServer, deps: CliDeps): void {
  deps.io.stderr.write(`fs-sandbox serve stats: ${JSON.stringify(server.stats())}\n`);
}

export function registerServeCommand(program: Command, deps: CliDeps): Command {
  return addServerPolicyOptions(addServerOptions(program.command('serve'), 'stdio'))
    .description(
      'serve the filesystem methods as JSON-RPC (Codex exec-server wire format) over stdio or WebSocket; ' +
        'the profile flags set the policy of requests that carry no sandbox (the Codex client sends none for its project discovery)',
    )
    .action(async (flags: ServeFlags & ContextFlags) => {
      await runServer(
        'serve',
        flags,
        deps,
        () => undefined,
        () => serverPolicyFrom(flags, deps.io),
      );
    });
}

/**
 * What a server command shares (`serve`, `app-server`): the broker, pool, trust and sandbox
 * flags, where it listens, and the bounds of its connections.
 */
export function addServerOptions(
  command: Command,
  defaultListen: string,
  defaultConcurrency: number = SERVER_DEFAULTS.concurrency,
): Command {
  return addPoolOptions(
    addProcessLimitOption(addUntrustedOption(addRequireSandboxOption(addBrokerOptions(command)))),
  )
    .option('--listen <address>', '`stdio` or `ws://HOST:PORT` (port 0 picks a free port)', defaultListen)
    .option(
      '--token-file <file>',
      'file holding the capability token WebSocket clients must send as a Bearer token',
    )
    .option('--allow-remote', 'allow a WebSocket address that is not loopback (the token is still required)')
    .option(
      '--allow-origin <origin>',
      'accept WebSocket handshakes from browser pages of this origin, e.g. http://localhost:3000 (repeatable; by default any handshake with an Origin is refused)',
      collect,
      [],
    )
    .option(
      '--max-message-bytes <n>',
      'largest JSON-RPC message accepted; it also bounds fs/writeFile, whose data travels in it as base64 (about 3/4 of this in bytes)',
      positiveInteger,
      SERVER_DEFAULTS.maxMessageBytes,
    )
    .option(
      '--max-unsent-bytes <n>',
      'finished replies one client has not read yet, in bytes, before its further requests wait to start',
      positiveInteger,
      SERVER_DEFAULTS.maxUnsentBytes,
    )
    .option(
      '--max-unsent-bytes-total <n>',
      'the same for all clients together',
      positiveInteger,
      SERVER_DEFAULTS.maxUnsentBytesTotal,
    )
    .option(
      '--max-connections <n>',
      'connections served at once',
      positiveInteger,
      SERVER_DEFAULTS.maxConnections,
    )
    .option(
      '--concurrency <n>',
      'requests of one connection running at once (1 = reference order)',
      positiveInteger,
      defaultConcurrency,
    )
    .option(
      '--audit-log <file>',
      'append one JSON line per operation to this file (no contents, hashed paths)',
    )
    .option('--audit-raw-paths', 'write path URIs to the audit log as they are instead of their sha256')
    .option('--stats', 'print a statistics snapshot on stderr at exit (always available with SIGUSR1)');
}

/**
 * Runs a server command to its end; a failure is one line on stderr and the exit code.
 * `policyFor` gives the server's policy (server-policy.ts), if any; `surfaceFor` the protocol
 * spoken, given the broker and that policy (undefined: the exec-server's).
 */
export async function runServer(
  name: string,
  flags: ServeFlags,
  deps: CliDeps,
  surfaceFor: (broker: FsBroker, policy: ServerPolicy | null) => ProtocolSurface | undefined,
  policyFor: () => ServerPolicy | null = () => null,
): Promise<void> {
  try {
    await serve(name, flags, deps, surfaceFor, policyFor);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    deps.io.stderr.write(`fs-sandbox ${name}: ${escapeForTerminal(message)}\n`);
    deps.setExitCode(error instanceof UsageError ? EXIT.usage : EXIT.failed);
  }
}

/** A flag value that does not parse is bad usage (exit 2), not a failed operation. */
function parseFlag<I, T>(parse: (input: I) => T, input: I): T {
  try {
    return parse(input);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

async function serve(
  name: string,
  flags: ServeFlags,
  deps: CliDeps,
  surfaceFor: (broker: FsBroker, policy: ServerPolicy | null) => ProtocolSurface | undefined,
  policyFor: () => ServerPolicy | null,
): Promise<void> {
  const address = parseFlag(parseListenAddress, flags.listen);
  const policy = parseFlag(policyFor, undefined);
  if (
    address.kind === 'stdio' &&
    (flags.tokenFile !== undefined || flags.allowRemote || flags.allowOrigin.length > 0)
  ) {
    throw new UsageError('--token-file, --allow-remote and --allow-origin apply to ws:// listeners only');
  }
  const allowedOrigins = flags.allowOrigin.map((origin) => parseFlag(parseAllowedOrigin, origin));
  if (address.kind === 'websocket') {
    // A WebSocket is reachable by every local process (and by the network off loopback); without
    // a token anyone could drive file operations with this broker's rights, so there is no
    // unauthenticated mode.
    if (flags.tokenFile === undefined) throw new UsageError('a ws:// listener needs --token-file');
    if (!address.loopback && !flags.allowRemote) {
      throw new UsageError(
        `refusing to listen on non-loopback address ${address.host} without --allow-remote`,
      );
    }
  }
  const token = flags.tokenFile === undefined ? null : await loadToken(flags.tokenFile);
  const audit: AuditSink | null = flags.auditLog
    ? await FileAuditLog.open(flags.auditLog, { rawPaths: flags.auditRawPaths === true })
    : null;
  // A long-lived server is what the warm pool is for: requests find helpers spawned ahead.
  const broker = deps.createBroker({
    ...brokerOptionsFrom(flags, deps.io),
    pool: poolOptionsFrom(flags),
    serverPolicy: policy?.context,
  });
  let surface: ProtocolSurface | undefined;
  try {
    surface = surfaceFor(broker, policy);
  } catch (error) {
    await broker.close();
    throw error;
  }
  const server = createServer({
    surface,
    broker,
    ...(policy === null ? {} : { environment: describeEnvironment(policy.cwd) }),
    concurrency: flags.concurrency,
    maxMessageBytes: flags.maxMessageBytes,
    maxUnsentBytes: flags.maxUnsentBytes,
    maxUnsentBytesTotal: flags.maxUnsentBytesTotal,
    maxConnections: flags.maxConnections,
    audit,
  });
  server.addStatsSource('pool', () => broker.poolStats());

  let stopped: () => void = () => undefined;
  let signalled = false;
  const stop = new Promise<void>((resolve) => {
    stopped = () => {
      signalled = true;
      resolve();
    };
  });
  const onStatsSignal = () => printStats(server, deps);
  process.on('SIGUSR1', onStatsSignal);
  process.once('SIGTERM', stopped);
  process.once('SIGINT', stopped);
  try {
    if (address.kind === 'stdio') {
      await Promise.race([server.serveStdio(deps.io.stdin as Readable, deps.io.stdout as Writable), stop]);
    } else {
      const listener = await server.listenWebSocket({
        host: address.host,
        port: address.port,
        token: token as string,
        allowedOrigins,
      });
      deps.io.stderr.write(`fs-sandbox ${name}: listening on ${listener.url}\n`);
      await stop;
    }
  } finally {
    process.off('SIGUSR1', onStatsSignal);
    process.off('SIGTERM', stopped);
    process.off('SIGINT', stopped);
    await server.close();
    await broker.close();
    await audit?.close();
    if (flags.stats) printStats(server, deps);
  }
  // stdin may still hold the event loop open after a signal; nothing else is left to do.
  (deps.io.stdin as Readable).destroy();
  // So may a reply a client never read: a write pending on stdout keeps the process alive for as
  // long as nobody reads (destroying process.stdout does not cancel it). Asked to stop by a signal,
  // with everything else closed, the server exits and drops what is unread; at the end of input it
  // never gets here before every reply was written.
  if (signalled && deps.io.stdout === process.stdout) process.exit(process.exitCode ?? EXIT.ok);
}
