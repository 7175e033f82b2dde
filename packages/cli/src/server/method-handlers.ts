import type { FsMethod } from '@fs-sandbox/broker/internal';
import {
  decodedBase64Length,
  descriptorOf,
  type HostOs,
  isExposedMethod,
  isHelperMethod,
  isMethod,
  type Method,
  nativeToPathUri,
  type ParamsIn,
  parseForHelper,
  parseParams,
  type ServerMethod,
} from '@fs-sandbox/policy';
import { PROCESS_HANDLERS } from './process-handlers.js';
import type { ServerCallContext } from './server-call-context.js';

/**
 * What each method does on the server, derived from the method table: a helper method goes to the
 * broker (one helper run), a server method to its handler below; the ordering key, the audited
 * paths and byte counts come from the method's descriptor.
 */

export type MethodHandler = (params: unknown, context: ServerCallContext) => Promise<unknown>;

/** The server methods other than the handshake, which the connection itself answers. */
const SERVER_HANDLERS: { readonly [M in Exclude<ServerMethod, 'initialize'>]: MethodHandler } = {
  'fs/open': openHandle,
  'fs/readBlock': readBlock,
  'fs/writeBlock': writeBlock,
  'fs/close': closeHandle,
  ...PROCESS_HANDLERS,
  'fs/explainAccess': explainAccess,
};

/**
 * Requests on one read handle must keep their order (fs/open, then fs/readBlock, then fs/close), as
 * a client pipelining them against the reference's one-at-a-time server would expect.
 */
export function orderingKey(method: string, params: unknown): string | null {
  if (!isMethod(method)) return null;
  const descriptor = descriptorOf(method);
  if (descriptor.orderedBy === undefined) return null;
  const value = fieldOf(params, descriptor.orderedBy);
  return typeof value === 'string' ? `${descriptor.orderedBy}:${value}` : null;
}

/** The handler of a method the server runs after the handshake, or null for an unknown method. */
export function handlerFor(method: string): MethodHandler | null {
  if (!isExposedMethod(method) || method === 'initialize') return null;
  // A request without params is read as empty params (as for the server methods), so the reply
  // names the field it lacks rather than "invalid type: map, expected a map".
  if (isHelperMethod(method)) return (params, context) => callBroker(method, params ?? {}, context);
  return SERVER_HANDLERS[method];
}

function fieldOf(params: unknown, field: string): unknown {
  return params !== null && typeof params === 'object'
    ? (params as Record<string, unknown>)[field]
    : undefined;
}

/** The paths a request names, as sent (the audit log records what the client asked for). */
function pathsOf(method: Method, params: unknown): unknown[] {
  return Object.keys(descriptorOf(method).paths)
    .map((field) => fieldOf(params, field))
    .filter((path) => path !== undefined);
}

/**
 * The paths a param carries inside its value (a patch's files) join the audited ones, as URIs. They
 * are read from params that parse; the broker refuses the others, and their record names what the
 * request spelled.
 */
function innerPathsOf(method: Method, params: unknown, os: HostOs): string[] {
  if (descriptorOf(method).innerPaths === undefined || !isHelperMethod(method)) return [];
  try {
    return parseForHelper(method, params, os)
      .paths.filter(({ field }) => !(field in descriptorOf(method).paths))
      .map(({ path }) => nativeToPathUri(path, os));
  } catch {
    return [];
  }
}

async function callBroker(method: FsMethod, params: unknown, context: ServerCallContext): Promise<unknown> {
  context.facts.paths = [...pathsOf(method, params), ...innerPathsOf(method, params, context.os)];
  const { result, info } = await context.broker.callWithInfo(method, params, context.call);
  context.facts.sandboxed = info.sandboxed;
  const binary = descriptorOf(method).binary ?? {};
  if (binary.result !== undefined) context.facts.bytesRead = binaryLength(fieldOf(result, binary.result));
  if (binary.params !== undefined) context.facts.bytesWritten = binaryLength(fieldOf(params, binary.params));
  return result;
}

/** A request without params is read as empty params, so the reply names the field it lacks. */
function parseServerParams<M extends ServerMethod>(method: M, params: unknown) {
  return parseParams(method, params ?? {});
}

async function openHandle(params: unknown, context: ServerCallContext): Promise<unknown> {
  const { handleId, mode } = parseServerParams('fs/open', params);
  // Valid as a whole now; the broker's fs/openForRead or fs/stageWrite parses the path and context
  // for the operation.
  const { path, sandbox } = params as ParamsIn<'fs/open'>;
  context.facts.paths = [path];
  const handle = await context.handles.open(
    { handleId, path, mode, sandbox: sandbox ?? null },
    context.call.signal,
  );
  context.facts.sandboxed = handle.sandboxed;
  return { handleId: handle.id };
}

async function readBlock(params: unknown, context: ServerCallContext): Promise<unknown> {
  const request = parseServerParams('fs/readBlock', params);
  const existing = context.handles.get(request.handleId);
  if (existing) {
    context.facts.paths = [existing.path];
    context.facts.sandboxed = existing.sandboxed;
  }
  const { block } = await context.handles.read(request, context.call.signal);
  context.facts.bytesRead = binaryLength(block.chunk);
  return block;
}

async function writeBlock(params: unknown, context: ServerCallContext): Promise<unknown> {
  const request = parseServerParams('fs/writeBlock', params);
  const existing = context.handles.get(request.handleId);
  if (existing) {
    context.facts.paths = [existing.path];
    context.facts.sandboxed = existing.sandboxed;
  }
  await context.handles.write(request, context.call.signal);
  context.facts.bytesWritten = binaryLength(request.chunk);
  return {};
}

async function closeHandle(params: unknown, context: ServerCallContext): Promise<unknown> {
  const { handleId } = parseServerParams('fs/close', params);
  const closed = await context.handles.close(handleId, context.call.signal);
  if (closed) {
    context.facts.paths = [closed.path];
    context.facts.sandboxed = closed.sandboxed;
  }
  return {};
}

function binaryLength(value: unknown): number {
  if (typeof value === 'string') return decodedBase64Length(value);
  if (value instanceof Uint8Array) return value.byteLength;
  return 0;
}

async function explainAccess(params: unknown, context: ServerCallContext): Promise<unknown> {
  context.facts.paths = pathsOf('fs/explainAccess', params);
  // Validated whole by the broker, against the method table's schema, like every call's params.
  return await context.broker.explainAccess((params ?? {}) as ParamsIn<'fs/explainAccess'>);
}

/** The handshake's params, checked whole by the method table like every other method's. */
export function parseInitializeParams(params: unknown): void {
  parseServerParams('initialize', params);
}
