import type { CommandLaunchSpec } from '@fs-sandbox/broker/internal';
import { FsError, nativePathOf, parseParams, type ServerMethod, type WireResultOf } from '@fs-sandbox/policy';
import { describeEnvironment } from './handshake.js';
import type { ServerCallContext } from './server-call-context.js';

/**
 * The process methods and the environment queries on the server (see process-table.ts for the
 * per-connection state). process/start builds the command's launch through the broker, so the
 * command runs in the platform sandbox its context calls for, under the same policy as a file
 * operation with that context.
 */

type Handler = (params: unknown, context: ServerCallContext) => Promise<unknown>;

function parse<M extends ServerMethod>(method: M, params: unknown) {
  return parseParams(method, params ?? {});
}

const SANDBOX_TYPE: Record<
  NonNullable<CommandLaunchSpec['backend']> | 'none',
  WireResultOf<'process/start'>['sandboxType']
> = {
  none: 'none',
  bwrap: 'linuxSeccomp',
  // The reference's enum has one Linux value; Landlock's launcher loads a seccomp filter too.
  landlock: 'linuxSeccomp',
  seatbelt: 'macosSeatbelt',
  'restricted-token': 'windowsRestrictedToken',
};

/** The terminal's size when the request names none: the reference's (it takes no size). */
const DEFAULT_TERMINAL = { rows: 24, cols: 80 };

async function startProcess(
  params: unknown,
  context: ServerCallContext,
): Promise<WireResultOf<'process/start'>> {
  const request = parse('process/start', params);
  context.facts.paths = [(params as { cwd: unknown }).cwd];
  if (request.size != null && !request.tty)
    throw new FsError('invalid_params', 'process/start size requires tty: true', { kind: 'spawnFailed' });
  if (request.arg0 != null && request.arg0 !== request.argv[0]) {
    throw new FsError('invalid_params', 'arg0 other than argv[0] is not supported by this executor', {
      kind: 'spawnFailed',
    });
  }
  const { processes } = context;
  processes.reserve(request.processId);
  try {
    const launch = await context.broker.prepareCommand(request.sandbox ?? null, {
      argv: request.argv,
      cwd: nativePathOf(request.cwd, context.os),
      env: request.env,
      envPolicy: request.envPolicy,
      managedNetwork: { enforce: request.enforceManagedNetwork, context: request.managedNetwork ?? null },
      terminal: request.tty ? (request.size ?? DEFAULT_TERMINAL) : null,
    });
    context.facts.sandboxed = launch.backend !== null;
    await processes.start({
      processId: request.processId,
      launch,
      pipeStdin: request.pipeStdin,
      tty: request.tty,
      outputBytesCap: request.outputBytesCap ?? null,
      timeoutMs: request.timeoutMs ?? null,
    });
    return { processId: request.processId, sandboxType: SANDBOX_TYPE[launch.backend ?? 'none'] };
  } catch (error) {
    processes.release(request.processId);
    throw error;
  }
}

async function readProcess(params: unknown, context: ServerCallContext): Promise<unknown> {
  const request = parse('process/read', params);
  return context.processes.read(
    request.processId,
    request.afterSeq ?? 0,
    request.maxBytes ?? null,
    request.waitMs ?? 0,
  );
}

async function writeProcess(params: unknown, context: ServerCallContext): Promise<unknown> {
  const request = parse('process/write', params);
  return context.processes.write(
    request.processId,
    Buffer.from(request.chunk, 'base64'),
    request.closeStdin === true,
  );
}

async function signalProcess(params: unknown, context: ServerCallContext): Promise<unknown> {
  context.processes.interrupt(parse('process/signal', params).processId);
  return {};
}

async function terminateProcess(params: unknown, context: ServerCallContext): Promise<unknown> {
  return context.processes.terminate(parse('process/terminate', params).processId);
}

async function environmentInfo(params: unknown): Promise<unknown> {
  parse('environment/info', params);
  return describeEnvironment();
}

async function environmentStatus(params: unknown): Promise<unknown> {
  parse('environment/status', params);
  return { status: 'ready' };
}

export const PROCESS_HANDLERS = {
  'environment/info': environmentInfo,
  'environment/status': environmentStatus,
  'process/start': startProcess,
  'process/read': readProcess,
  'process/write': writeProcess,
  'process/signal': signalProcess,
  'process/terminate': terminateProcess,
} as const satisfies Record<string, Handler>;
