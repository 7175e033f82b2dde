import type { z } from 'zod';
import { FsError } from '../error-kinds.js';
import { assertHandleIdLength, assertReadBlockLength, assertWalkLimits } from '../request-bounds.js';
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
  'fs/removeTemps': params.removeTempsParamsSchema,
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
  'fs/removeTemps': results.emptyResultSchema,
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
 * Semantic bounds reported as invalid *request* (-32600) with fixed texts, after the params
 * themselves parsed fine: the walk, block-length and handle-id limits, and the refusal of write
 * streaming.
 */
function checkBounds(method: RpcMethod, parsed: unknown): void {
  if (method === 'fs/walk') {
    assertWalkLimits((parsed as params.WalkParams).options);
  }
  if (method === 'fs/readBlock' || method === 'fs/readRange') {
    const { len } = parsed as params.ReadBlockParams;
    assertReadBlockLength(len);
  }
  if (method === 'fs/open' || method === 'fs/readBlock' || method === 'fs/close') {
    assertHandleIdLength((parsed as params.CloseParams).handleId);
  }
  if (method === 'fs/open' && (parsed as params.OpenParams).mode === 'replace') {
    // Write streaming would need a sandboxed writer that outlives one helper run; until that exists
    // it is refused outright rather than written outside the helper.
    throw new FsError(
      'invalid_request',
      'fs/open mode `replace` (write streaming) is not supported by fs-sandbox; use fs/writeFile',
    );
  }
}

/**
 * Typed params for `method`, or an FsError: `invalid_params` with a serde-style message (the
 * offending field's dotted path in `data.field`; a key the method does not declare is refused, never
 * ignored), or `invalid_request` for the bounds above.
 */
export function parseParams<M extends RpcMethod>(method: M, raw: unknown): ParamsFor<M> {
  const schema = PARAMS_SCHEMAS[method] as z.ZodType | undefined;
  if (!schema) throw new FsError('invalid_request', `unknown method \`${String(method)}\``);
  const result = schema.safeParse(raw, safeParseOptions(`${method} params`));
  if (!result.success) throw issueToFsError(result.error);
  checkBounds(method, result.data);
  return result.data as ParamsFor<M>;
}

/** Validates a result against its schema (used by tests and by the broker on helper replies). */
export function parseResult<M extends RpcMethod>(method: M, raw: unknown): ResultFor<M> {
  const result = RESULT_SCHEMAS[method].safeParse(raw, safeParseOptions(`${method} result`));
  if (!result.success) {
    const error = issueToFsError(result.error);
    throw new FsError('helper_failed', `invalid ${method} result: ${error.message}`, error.extra);
  }
  return result.data as ResultFor<M>;
}

/** A standalone sandbox context (e.g. from a CLI flag), with the same messages as inside params. */
export function parseSandboxContext(raw: unknown): z.output<typeof sandboxContextSchema> | null {
  if (raw === null || raw === undefined) return null;
  const result = sandboxContextSchema.safeParse(raw, safeParseOptions('sandbox context'));
  if (!result.success) throw issueToFsError(result.error);
  return result.data;
}
