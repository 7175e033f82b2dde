import type { z } from 'zod';
import { FsError } from '../error-kinds.js';
import { assertReadBlockLength, assertWalkLimits } from '../request-bounds.js';
import * as params from './fs-params.js';
import * as results from './fs-results.js';
import { sandboxContextSchema } from './sandbox-context.js';
import { issueToFsError, safeParseOptions } from './serde-messages.js';

/** One table per direction, so a method's params and result schemas are looked up, never switched on. */
const PARAMS_SCHEMAS = {
  'fs/readFile': params.readFileParamsSchema,
  'fs/writeFile': params.writeFileParamsSchema,
  'fs/createDirectory': params.createDirectoryParamsSchema,
  'fs/getMetadata': params.getMetadataParamsSchema,
  'fs/canonicalize': params.canonicalizeParamsSchema,
  'fs/readDirectory': params.readDirectoryParamsSchema,
  'fs/remove': params.removeParamsSchema,
  'fs/copy': params.copyParamsSchema,
  'fs/walk': params.walkParamsSchema,
  'fs/open': params.openParamsSchema,
  'fs/readBlock': params.readBlockParamsSchema,
  'fs/close': params.closeParamsSchema,
  'fs/openForRead': params.openForReadParamsSchema,
  'fs/readRange': params.readRangeParamsSchema,
} as const;

const RESULT_SCHEMAS = {
  'fs/readFile': results.readFileResultSchema,
  'fs/writeFile': results.emptyResultSchema,
  'fs/createDirectory': results.emptyResultSchema,
  'fs/getMetadata': results.getMetadataResultSchema,
  'fs/canonicalize': results.canonicalizeResultSchema,
  'fs/readDirectory': results.readDirectoryResultSchema,
  'fs/remove': results.emptyResultSchema,
  'fs/copy': results.emptyResultSchema,
  'fs/walk': results.walkResultSchema,
  'fs/open': results.openResultSchema,
  'fs/readBlock': results.readBlockResultSchema,
  'fs/close': results.emptyResultSchema,
  'fs/openForRead': results.openForReadResultSchema,
  'fs/readRange': results.readRangeResultSchema,
} as const satisfies Record<keyof typeof PARAMS_SCHEMAS, z.ZodType>;

/** Every method with a params schema: the fs methods, the handle methods and the internal helper ops. */
export type RpcMethod = keyof typeof PARAMS_SCHEMAS;
export type ParamsFor<M extends RpcMethod> = z.output<(typeof PARAMS_SCHEMAS)[M]>;
export type ResultFor<M extends RpcMethod> = z.output<(typeof RESULT_SCHEMAS)[M]>;

export function paramsSchemaFor<M extends RpcMethod>(method: M): (typeof PARAMS_SCHEMAS)[M] {
  return PARAMS_SCHEMAS[method];
}

export function resultSchemaFor<M extends RpcMethod>(method: M): (typeof RESULT_SCHEMAS)[M] {
  return RESULT_SCHEMAS[method];
}

/**
 * Semantic bounds that the reference reports as invalid *request* (-32600) with fixed texts, after
 * the params themselves parsed fine.
 */
function checkBounds(method: RpcMethod, parsed: unknown): void {
  if (method === 'fs/walk') {
    assertWalkLimits((parsed as params.WalkParams).options);
  }
  if (method === 'fs/readBlock' || method === 'fs/readRange') {
    const { len } = parsed as params.ReadBlockParams;
    assertReadBlockLength(len);
  }
}

/**
 * Typed params for `method`, or an FsError: `invalid_params` with a serde-style message (the
 * offending field's dotted path in `data.field`), or `invalid_request` for the walk and block-length
 * bounds, whose reference texts are fixed.
 */
export function parseParams<M extends RpcMethod>(method: M, raw: unknown): ParamsFor<M> {
  const schema = PARAMS_SCHEMAS[method] as z.ZodType | undefined;
  if (!schema) throw new FsError('invalid_request', `unknown method \`${String(method)}\``);
  const result = schema.safeParse(raw, safeParseOptions());
  if (!result.success) throw issueToFsError(result.error);
  checkBounds(method, result.data);
  return result.data as ParamsFor<M>;
}

/** Validates a result against its schema (used by tests and by the broker on helper replies). */
export function parseResult<M extends RpcMethod>(method: M, raw: unknown): ResultFor<M> {
  const result = RESULT_SCHEMAS[method].safeParse(raw, safeParseOptions());
  if (!result.success) {
    const error = issueToFsError(result.error);
    throw new FsError('helper_failed', `invalid ${method} result: ${error.message}`, error.extra);
  }
  return result.data as ResultFor<M>;
}

/** A standalone sandbox context (e.g. from a CLI flag), with the same messages as inside params. */
export function parseSandboxContext(raw: unknown): z.output<typeof sandboxContextSchema> | null {
  if (raw === null || raw === undefined) return null;
  const result = sandboxContextSchema.safeParse(raw, safeParseOptions());
  if (!result.success) throw issueToFsError(result.error);
  return result.data;
}
