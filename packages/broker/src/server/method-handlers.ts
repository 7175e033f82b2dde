import { type FsMethod, isFsMethod, isHandleMethod } from '@fs-sandbox/policy';
import type { CallOptions } from '../broker-api.js';
import { decodedBase64Length } from './encode-reply.js';
import type { ReadHandleManager } from './read-handles.js';
import type { ServerBroker } from './server-broker.js';
import { parseCloseParams, parseOpenParams, parseReadBlockParams } from './server-params.js';

/** What the audit log and the statistics learn while an operation runs (never its contents). */
export interface OperationFacts {
  paths: unknown[];
  sandboxed: boolean | null;
  bytesRead: number;
  bytesWritten: number;
}

export interface OperationContext {
  broker: ServerBroker;
  handles: ReadHandleManager;
  call: CallOptions & { signal: AbortSignal };
  facts: OperationFacts;
}

type MethodHandler = (params: unknown, context: OperationContext) => Promise<unknown>;

/**
 * Requests on one read handle must keep their order (fs/open, then fs/readBlock, then fs/close), as
 * a client pipelining them against the reference's one-at-a-time server would expect.
 */
export function orderingKey(method: string, params: unknown): string | null {
  if (!isHandleMethod(method)) return null;
  const handleId = (params as { handleId?: unknown } | null | undefined)?.handleId;
  return typeof handleId === 'string' ? `handle:${handleId}` : null;
}

/** The handler of a method the server runs after the handshake, or null for an unknown method. */
export function handlerFor(method: string): MethodHandler | null {
  if (isFsMethod(method)) return (params, context) => callBroker(method, params, context);
  if (method === 'fs/open') return openHandle;
  if (method === 'fs/readBlock') return readBlock;
  if (method === 'fs/close') return closeHandle;
  return null;
}

function pathsOf(params: unknown): unknown[] {
  if (params === null || typeof params !== 'object') return [];
  const fields = params as Record<string, unknown>;
  return [fields.path, fields.sourcePath, fields.destinationPath].filter((path) => path !== undefined);
}

async function callBroker(method: FsMethod, params: unknown, context: OperationContext): Promise<unknown> {
  context.facts.paths = pathsOf(params);
  const { result, info } = await context.broker.callWithInfo(method, params, context.call);
  context.facts.sandboxed = info.sandboxed;
  if (method === 'fs/readFile')
    context.facts.bytesRead = binaryLength((result as { dataBase64?: unknown }).dataBase64);
  if (method === 'fs/writeFile') {
    context.facts.bytesWritten = binaryLength((params as { dataBase64?: unknown }).dataBase64);
  }
  return result;
}

async function openHandle(params: unknown, context: OperationContext): Promise<unknown> {
  const open = parseOpenParams(params);
  context.facts.paths = [open.path];
  const handle = await context.handles.open(open, context.call.signal);
  context.facts.sandboxed = handle.sandboxed;
  return { handleId: handle.id };
}

async function readBlock(params: unknown, context: OperationContext): Promise<unknown> {
  const request = parseReadBlockParams(params);
  const existing = context.handles.get(request.handleId);
  if (existing) {
    context.facts.paths = [existing.path];
    context.facts.sandboxed = existing.sandboxed;
  }
  const { block } = await context.handles.read(request, context.call.signal);
  context.facts.bytesRead = binaryLength(block.chunk);
  return { chunk: block.chunk, eof: block.eof };
}

async function closeHandle(params: unknown, context: OperationContext): Promise<unknown> {
  const closed = context.handles.close(parseCloseParams(params).handleId);
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
