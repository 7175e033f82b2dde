import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { FsMethod } from '@fs-sandbox/broker/internal';
import {
  type AppOperationMethod,
  type AppServerMethod,
  appDescriptorOf,
  appInitializeParamsSchema,
  appResultOf,
  currentHostOs,
  FsError,
  type HostOs,
  isAppServerMethod,
  isFsError,
  operationParamsOf,
  parseAppParams,
  parseAppValue,
  RPC_CODES,
} from '@fs-sandbox/policy';
import packageJson from '../../../package.json' with { type: 'json' };
import type { MethodHandler } from '../method-handlers.js';
import type { ServerCallContext } from '../server-call-context.js';
import type { ProtocolSurface, SessionNotifier, SurfaceSession } from '../surface.js';
import { MethodNotFoundError } from '../wire-errors.js';
import type { AppServerSettings } from './app-server-settings.js';
import { appWireError, RecodedError } from './app-wire-errors.js';
import { CommandSessions } from './command-sessions.js';
import { WatchTable } from './watch-table.js';

export type { AppServerBroker, AppServerSettings } from './app-server-settings.js';

/**
 * The Codex app-server's V2 surface (`fs-sandbox app-server`): files, watches, processes and
 * commands, each under the server's policy. The reference runs its V2 file methods and
 * process/spawn on the host as the server's user; here every file method is one helper operation
 * under the server's sandbox context (the same parse, pre-checks, sandbox and helper guard as the
 * exec-server's), a watch is refused where that context could not read, and every process runs in
 * the sandbox the context (narrowed by a command's own policy) builds.
 */
/** What one connection's handlers share. */
export interface AppSessionState {
  settings: AppServerSettings;
  os: HostOs;
  /** Set by `initialize`: whether the client opted into the experimental methods and fields. */
  experimentalApi: boolean;
  watches: WatchTable;
  commands: CommandSessions;
}

type AppHandler = (params: unknown, context: ServerCallContext, state: AppSessionState) => Promise<unknown>;

export function appServerSurface(settings: AppServerSettings): ProtocolSurface {
  const os = settings.os ?? currentHostOs();
  return {
    open: (notifier) => new AppSession(settings, os, notifier),
    handshakeError: (state) =>
      // The reference gates on `initialize` alone: a request between it and `initialized` is served.
      state === 'new' ? new FsError('invalid_request', 'Not initialized') : null,
    repeatedInitializeError: () => new FsError('invalid_request', 'Already initialized'),
    wireError: appWireError,
    // The reference stamps each notification with the time it left (an extra top-level member).
    notification: (method, params) => ({ method, params, emittedAtMs: Date.now() }),
    // Requests on one watch, and the controls of one process, keep their order. The request that
    // starts a process is not ordered with them: command/exec is answered only when its command
    // exits, and its own writes must reach it before then.
    orderingKey: (method, params) => {
      if (!ORDERED_METHODS.has(method) || params === null || typeof params !== 'object') return null;
      const record = params as Record<string, unknown>;
      const key = record.processHandle ?? record.processId ?? record.watchId;
      return typeof key === 'string' ? `${method.split('/')[0]}:${key}` : null;
    },
  };
}

const ORDERED_METHODS: ReadonlySet<string> = new Set<AppServerMethod>([
  'fs/watch',
  'fs/unwatch',
  'process/writeStdin',
  'process/kill',
  'process/resizePty',
  'command/exec/write',
  'command/exec/resize',
  'command/exec/terminate',
]);

class AppSession implements SurfaceSession {
  private readonly state: AppSessionState;

  constructor(settings: AppServerSettings, os: HostOs, notifier: SessionNotifier) {
    this.state = {
      settings,
      os,
      experimentalApi: false,
      watches: new WatchTable(settings, os, notifier),
      commands: new CommandSessions(settings, os, notifier),
    };
  }

  initialize(params: unknown): unknown {
    const parsed = parseAppValue(appInitializeParamsSchema(), params, 'initialize params');
    this.state.experimentalApi = parsed.capabilities?.experimentalApi ?? false;
    const { name, version } = parsed.clientInfo;
    return {
      userAgent: `fs-sandbox/${packageJson.version} (${process.platform}; ${process.arch}) (${name}; ${version})`,
      codexHome: codexHome(this.state.settings.env),
      platformFamily: this.state.os === 'windows' ? 'windows' : 'unix',
      platformOs: this.state.os,
    };
  }

  handlerFor(method: string): MethodHandler | null {
    if (!isAppServerMethod(method)) return null;
    const handler = APP_HANDLERS[method];
    return (params, context) => {
      if (appDescriptorOf(method).experimental && !this.state.experimentalApi)
        throw new FsError('invalid_request', `${method} requires experimentalApi capability`);
      return handler(params, context, this.state);
    };
  }

  methodNotFound(method: string): unknown {
    return new MethodNotFoundError(method);
  }

  resumeOutput(): void {
    this.state.watches.resumeOutput();
    this.state.commands.resumeOutput();
  }

  /**
   * As the reference, a client that ends its input ends its processes and watches (it exits): a
   * command/exec without a timeout would otherwise hold the connection for ever. Its pending
   * command/exec requests are then answered with the killed command's exit.
   */
  inputEnded(): void {
    this.close();
  }

  close(): void {
    this.state.watches.closeAll();
    this.state.commands.closeAll();
  }
}

/**
 * `codexHome` is required by the reference's result type, so it is reported as the reference
 * finds it (`CODEX_HOME`, else `~/.codex`); fs-sandbox itself never reads or writes there.
 */
function codexHome(env: Record<string, string | undefined>): string {
  const fromEnv = env.CODEX_HOME;
  return fromEnv !== undefined && isAbsolute(fromEnv) ? fromEnv : join(homedir(), '.codex');
}

/** A file method: its operation under the server's context, its result in V2 form. */
function operationHandler<M extends AppOperationMethod>(method: M): AppHandler {
  return async (raw, context, state) => {
    const params = parseAppParams(method, raw);
    const operation = appDescriptorOf(method).operation as { method: FsMethod };
    context.facts.paths = Object.keys(appDescriptorOf(method).paths).map(
      (field) => (params as Record<string, unknown>)[field],
    );
    const { result, info } = await context.broker
      .callWithInfo(
        operation.method,
        { ...operationParamsOf(method, params, state.os), sandbox: state.settings.context },
        context.call,
      )
      .catch((error: unknown) => {
        // Reading a directory is a request the reference will not do, not an OS refusal.
        if (method === 'fs/readFile' && isFsError(error) && error.kind === 'is_directory')
          throw new RecodedError(error, RPC_CODES.invalidRequest);
        throw error;
      });
    context.facts.sandboxed = info.sandboxed;
    return appResultOf(method, result);
  };
}

const APP_HANDLERS: { readonly [M in AppServerMethod]: AppHandler } = {
  'fs/readFile': operationHandler('fs/readFile'),
  'fs/writeFile': operationHandler('fs/writeFile'),
  'fs/createDirectory': operationHandler('fs/createDirectory'),
  'fs/getMetadata': operationHandler('fs/getMetadata'),
  'fs/readDirectory': operationHandler('fs/readDirectory'),
  'fs/remove': operationHandler('fs/remove'),
  'fs/copy': operationHandler('fs/copy'),
  'fs/watch': (raw, _context, state) => state.watches.watch(parseAppParams('fs/watch', raw)),
  'fs/unwatch': async (raw, _context, state) =>
    state.watches.unwatch(parseAppParams('fs/unwatch', raw).watchId),
  'process/spawn': (raw, _context, state) => state.commands.spawn(parseAppParams('process/spawn', raw)),
  'process/writeStdin': async (raw, _context, state) =>
    state.commands.writeStdin('process', parseAppParams('process/writeStdin', raw)),
  'process/kill': async (raw, _context, state) =>
    state.commands.terminate('process', parseAppParams('process/kill', raw).processHandle),
  'process/resizePty': async (raw, _context, state) => {
    const { processHandle, size } = parseAppParams('process/resizePty', raw);
    return state.commands.resize('process', processHandle, size);
  },
  'command/exec': (raw, _context, state) =>
    state.commands.exec(parseAppParams('command/exec', raw), state.experimentalApi),
  'command/exec/write': async (raw, _context, state) =>
    state.commands.writeStdin('command', parseAppParams('command/exec/write', raw)),
  'command/exec/resize': async (raw, _context, state) => {
    const { processId, size } = parseAppParams('command/exec/resize', raw);
    return state.commands.resize('command', processId, size);
  },
  'command/exec/terminate': async (raw, _context, state) =>
    state.commands.terminate('command', parseAppParams('command/exec/terminate', raw).processId),
};
