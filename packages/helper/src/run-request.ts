import {
  currentHostOs,
  FsError,
  type HelperOperation,
  type HostOs,
  isHelperOperation,
  toWireError,
} from '@fs-sandbox/policy/core';
import { checkFreshness, parseFreshness } from './freshness.js';
import { parseGuard } from './guard-param.js';
import type { Operation } from './operation.js';
import { canonicalizeOperation } from './ops/canonicalize.js';
import { copyOperation } from './ops/copy.js';
import { createDirectoryOperation } from './ops/create-directory.js';
import { getMetadataOperation } from './ops/get-metadata.js';
import { openForReadOperation } from './ops/open-for-read.js';
import { readDirectoryOperation } from './ops/read-directory.js';
import { readFileOperation } from './ops/read-file.js';
import { readRangeOperation } from './ops/read-range.js';
import { removeOperation } from './ops/remove.js';
import { removeTempsOperation } from './ops/remove-temps.js';
import { walkOperation } from './ops/walk.js';
import { writeFileOperation } from './ops/write-file.js';
import { fromOsError } from './os-error.js';
import { isPlainObject } from './params.js';
import type { HelperReply } from './protocol.js';
import { isRestrictedContext } from './sandbox-context.js';

const OPERATIONS: Record<HelperOperation, Operation> = {
  'fs/readFile': readFileOperation,
  'fs/writeFile': writeFileOperation,
  'fs/createDirectory': createDirectoryOperation,
  'fs/getMetadata': getMetadataOperation,
  'fs/canonicalize': canonicalizeOperation,
  'fs/readDirectory': readDirectoryOperation,
  'fs/remove': removeOperation,
  'fs/copy': copyOperation,
  'fs/walk': walkOperation,
  'fs/openForRead': openForReadOperation,
  'fs/readRange': readRangeOperation,
  'fs/removeTemps': removeTempsOperation,
};

/** Operations that create, replace or remove files: the ones the path guard is for. */
const CHANGES_FILES: ReadonlySet<HelperOperation> = new Set([
  'fs/writeFile',
  'fs/createDirectory',
  'fs/remove',
  'fs/copy',
  'fs/removeTemps',
]);

export interface RunOptions {
  /**
   * Treat the request as sandboxed whatever `params.sandbox` says (the program running inside a
   * platform sandbox knows it is). A restricted `params.sandbox` makes it sandboxed either way.
   */
  sandboxed?: boolean;
  /** Host rules for path URIs; defaults to this machine. */
  os?: HostOs;
}

/**
 * Performs one helper request and returns its reply; it never throws. The request is `unknown` on
 * purpose: it comes from stdin or from another package, and is checked here, not trusted.
 */
export async function runRequest(request: unknown, options: RunOptions = {}): Promise<HelperReply> {
  try {
    const { operation, params, freshness, guard } = parseEnvelope(request);
    await checkFreshness(freshness);
    const context = {
      os: options.os ?? currentHostOs(),
      sandboxed: options.sandboxed === true || isRestrictedContext(params.sandbox),
      guard,
    };
    if (context.sandboxed && guard === null && CHANGES_FILES.has(operation)) {
      // Inside a sandbox the physical checks are half the enforcement: never run without them.
      throw new FsError('invalid_request', `a sandboxed ${operation} request needs its \`guard\``);
    }
    const outcome = await OPERATIONS[operation].run(params, context);
    return {
      status: 'ok',
      payload: { operation, response: outcome.response },
      ...(outcome.binary ? { binary: outcome.binary } : {}),
    };
  } catch (error) {
    // Operations map their own OS errors with the path they concern; one that slipped through
    // still names the path Node reports rather than becoming an opaque internal error.
    const path =
      typeof (error as { path?: unknown })?.path === 'string' ? (error as { path: string }).path : '';
    return { status: 'error', payload: toWireError(fromOsError(error, path)) };
  }
}

function parseEnvelope(request: unknown) {
  if (!isPlainObject(request)) throw new FsError('invalid_request', 'helper request must be a JSON object');
  const { operation, params } = request;
  if (typeof operation !== 'string')
    throw new FsError('invalid_request', 'helper request needs a string `operation`');
  if (!isHelperOperation(operation)) {
    throw new FsError('invalid_request', `unknown helper operation \`${operation}\``);
  }
  if (!isPlainObject(params)) throw new FsError('invalid_request', 'helper request needs a `params` object');
  return {
    operation,
    params: withBinary(params, request.binary),
    freshness: parseFreshness(request.freshness),
    guard: parseGuard(request.guard),
  };
}

/** Binary framing: the raw bytes stand for one string field of the params (the broker never base64-encodes them). */
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
