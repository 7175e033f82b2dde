import type { HelperMethod } from '@fs-sandbox/policy';
import { currentHostOs, FsError, type HostOs, toWireError } from '@fs-sandbox/policy/core';
import { checkFreshness, parseFreshness } from './freshness.js';
import { parseGuard } from './guard-param.js';
import type { Operation, OperationContext } from './operation.js';
import { applyPatchOperation } from './ops/apply-patch.js';
import { batchOperation } from './ops/batch.js';
import { canonicalizeOperation } from './ops/canonicalize.js';
import { copyOperation } from './ops/copy.js';
import { createDirectoryOperation } from './ops/create-directory.js';
import { discardStagedOperation } from './ops/discard-staged.js';
import { editOperation } from './ops/edit.js';
import { getMetadataOperation } from './ops/get-metadata.js';
import { globOperation } from './ops/glob.js';
import { openForReadOperation } from './ops/open-for-read.js';
import { publishStagedOperation } from './ops/publish-staged.js';
import { readDirectoryOperation } from './ops/read-directory.js';
import { readFileOperation } from './ops/read-file.js';
import { readRangeOperation } from './ops/read-range.js';
import { readTextFileOperation } from './ops/read-text-file.js';
import { removeOperation } from './ops/remove.js';
import { removeTempsOperation } from './ops/remove-temps.js';
import { renameOperation } from './ops/rename.js';
import { searchOperation } from './ops/search.js';
import { stageWriteOperation } from './ops/stage-write.js';
import { walkOperation } from './ops/walk.js';
import { writeFileOperation } from './ops/write-file.js';
import { writeRangeOperation } from './ops/write-range.js';
import { fromOsError } from './os-error.js';
import { isPlainObject } from './params.js';
import type { HelperReply } from './protocol.js';
import type { ProgressSink } from './tree-progress-counter.js';

/** One operation module per helper method of the method table; the type makes a missing one a compile error. */
const OPERATIONS: { readonly [M in HelperMethod]: Operation<M> } = {
  'fs/readFile': readFileOperation,
  'fs/applyPatch': applyPatchOperation,
  'fs/writeFile': writeFileOperation,
  'fs/readTextFile': readTextFileOperation,
  'fs/edit': editOperation,
  'fs/createDirectory': createDirectoryOperation,
  'fs/getMetadata': getMetadataOperation,
  'fs/canonicalize': canonicalizeOperation,
  'fs/readDirectory': readDirectoryOperation,
  'fs/remove': removeOperation,
  'fs/copy': copyOperation,
  'fs/walk': walkOperation,
  'fs/search': searchOperation,
  'fs/glob': globOperation,
  'fs/rename': renameOperation,
  'fs/batch': batchOperation(performCaught),
  'fs/openForRead': openForReadOperation,
  'fs/readRange': readRangeOperation,
  'fs/stageWrite': stageWriteOperation,
  'fs/writeRange': writeRangeOperation,
  'fs/publishStaged': publishStagedOperation,
  'fs/discardStaged': discardStagedOperation,
  'fs/removeTemps': removeTempsOperation,
};

export interface RunOptions {
  /**
   * Treat the request as sandboxed whatever it says. The helper program itself relies on the
   * request's `sandboxed` (the broker sets it, with the guard, on every request it sends into a
   * sandbox); tests and embedders that know better pass this.
   */
  sandboxed?: boolean;
  /** Host rules for paths; defaults to this machine. */
  os?: HostOs;
  /** Where long tree operations report their progress (the helper program: its stderr). */
  onProgress?: ProgressSink;
}

/**
 * Performs one helper request and returns its reply; it never throws. The request is `unknown` on
 * purpose: it comes from stdin or from another package, and is checked here, not trusted.
 */
export async function runRequest(request: unknown, options: RunOptions = {}): Promise<HelperReply> {
  try {
    const envelope = parseEnvelope(request);
    await checkFreshness(envelope.freshness);
    const os = options.os ?? currentHostOs();
    const sandboxed = options.sandboxed === true || envelope.sandboxed;
    if (sandboxed && envelope.guard === null) {
      // Inside a sandbox the physical checks are half the enforcement: never run without them.
      throw new FsError('invalid_request', `a sandboxed ${envelope.operation} request needs its \`guard\``);
    }
    return await perform(envelope.operation, envelope.params, {
      os,
      sandboxed,
      guard: envelope.guard,
      ripgrep: envelope.ripgrep,
      progress: options.onProgress ?? null,
    });
  } catch (error) {
    return errorReply(error);
  }
}

function errorReply(error: unknown): HelperReply {
  // Operations map their own OS errors with the path they concern; one that slipped through
  // still names the path Node reports rather than becoming an opaque internal error.
  const path =
    typeof (error as { path?: unknown })?.path === 'string' ? (error as { path: string }).path : '';
  return { status: 'error', payload: toWireError(fromOsError(error, path)) };
}

/** One operation of a batch: dispatched like a request of its own, its failure its own reply. */
async function performCaught(
  operation: string,
  raw: Record<string, unknown>,
  context: OperationContext,
): Promise<HelperReply> {
  try {
    if (!Object.hasOwn(OPERATIONS, operation)) {
      throw new FsError('invalid_request', `unknown helper operation \`${operation}\``);
    }
    return await perform(operation as HelperMethod, raw, context);
  } catch (error) {
    return errorReply(error);
  }
}

async function perform<M extends HelperMethod>(
  operation: M,
  raw: Record<string, unknown>,
  context: Parameters<Operation<M>['run']>[1],
): Promise<HelperReply> {
  const handler = OPERATIONS[operation] as Operation<M>;
  const outcome = await handler.run(handler.parse(raw, context.os), context);
  return {
    status: 'ok',
    payload: { operation, response: outcome.response },
    ...(outcome.binary ? { binary: outcome.binary } : {}),
  } as HelperReply;
}

function parseEnvelope(request: unknown) {
  if (!isPlainObject(request)) throw new FsError('invalid_request', 'helper request must be a JSON object');
  const { operation, params, sandboxed, ripgrep } = request;
  if (typeof operation !== 'string')
    throw new FsError('invalid_request', 'helper request needs a string `operation`');
  if (!Object.hasOwn(OPERATIONS, operation)) {
    throw new FsError('invalid_request', `unknown helper operation \`${operation}\``);
  }
  if (!isPlainObject(params)) throw new FsError('invalid_request', 'helper request needs a `params` object');
  if (sandboxed !== undefined && typeof sandboxed !== 'boolean') {
    throw new FsError('invalid_request', 'helper request `sandboxed` must be a boolean');
  }
  if (ripgrep !== undefined && typeof ripgrep !== 'string') {
    throw new FsError('invalid_request', 'helper request `ripgrep` must be a path string');
  }
  return {
    operation: operation as HelperMethod,
    params: withBinary(params, request.binary),
    sandboxed: sandboxed === true,
    freshness: parseFreshness(request.freshness),
    guard: parseGuard(request.guard),
    ripgrep: ripgrep ?? null,
  };
}

/** Binary framing: the raw bytes stand for one field of the params (the broker never base64-encodes them). */
function withBinary(params: Record<string, unknown>, binary: unknown): Record<string, unknown> {
  if (binary === undefined || binary === null) return params;
  if (!isPlainObject(binary) || typeof binary.field !== 'string' || !(binary.data instanceof Uint8Array)) {
    throw new FsError(
      'invalid_request',
      'helper request `binary` must be {field, data} with the bytes as data',
    );
  }
  return { ...params, [binary.field]: binary.data };
}
