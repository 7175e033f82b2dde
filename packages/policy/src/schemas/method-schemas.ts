import type { z } from 'zod';
import { FsError } from '../error-kinds.js';
import { LIMITS } from '../limits.js';
import {
  isMethod,
  METHOD_TABLE,
  type Method,
  type ParsedParams,
  type WireResultOf,
} from '../method-table.js';
import { contextKeyOf, keepContext, keptContext } from './context-memo.js';
import { type SandboxContext, sandboxContextSchema, sandboxFieldSchema } from './sandbox-context.js';
import { issueToFsError, safeParseOptions } from './serde-messages.js';

/**
 * Params of `method` parsed by its table entry, or an FsError: `invalid_params` with a serde-style
 * message (the offending field's dotted path in `data.field`; a key the method does not declare is
 * refused, never ignored), or `invalid_request` for the entry's bounds.
 */
export function parseParams<M extends Method>(method: M, raw: unknown): ParsedParams<M> {
  if (!isMethod(method)) throw new FsError('invalid_request', `unknown method \`${String(method)}\``);
  assertShallow(raw, `${method} params`);
  const descriptor = METHOD_TABLE[method];
  const schema: z.ZodType = descriptor.params();
  // A context parsed before is not parsed again (context-memo.ts); the rest of the params always is.
  // The context is read once, for its key: what the schema then parses is that key's text, so what
  // is kept under a key is always the parse of exactly that text.
  const contextKey =
    declaresContext(schema) && isPlainRecord(raw) && Object.hasOwn(raw, 'sandbox')
      ? contextKeyOf(raw.sandbox)
      : null;
  const known = contextKey === null ? undefined : keptContext(contextKey);
  const input =
    contextKey === null
      ? raw
      : {
          ...(raw as Record<string, unknown>),
          sandbox: known === undefined ? JSON.parse(contextKey) : undefined,
        };
  const result = schema.safeParse(input, safeParseOptions(`${method} params`));
  if (!result.success) throw issueToFsError(result.error);
  const parsed = result.data as Record<string, unknown>;
  if (known !== undefined) parsed.sandbox = known;
  else if (contextKey !== null && parsed.sandbox != null)
    parsed.sandbox = keepContext(contextKey, parsed.sandbox);
  if ('checkBounds' in descriptor) (descriptor.checkBounds as (parsed: unknown) => void)(parsed);
  return parsed as ParsedParams<M>;
}

/** Params whose `sandbox` field is the shared context schema (the methods that act under a context). */
function declaresContext(schema: unknown): boolean {
  return (schema as { shape?: Record<string, unknown> }).shape?.sandbox === sandboxFieldSchema();
}

/** Params the spread above copies as the schema reads them: own properties of a plain object. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A result checked against its schema. Nothing on the request path calls this (the helper's
 * replies are its own code's, and their shape is checked by the reply reader); the conformance
 * tests run every real reply through it, so a result that drifts from its declared type fails there.
 */
export function parseResult<M extends Method>(method: M, raw: unknown): WireResultOf<M> {
  const schema: z.ZodType = METHOD_TABLE[method].result();
  const result = schema.safeParse(raw, safeParseOptions(`${method} result`));
  if (!result.success) {
    const error = issueToFsError(result.error);
    throw new FsError('helper_failed', `invalid ${method} result: ${error.message}`, error.extra);
  }
  return result.data as WireResultOf<M>;
}

/**
 * Refuses a value nested deeper than LIMITS.paramsMaxDepth before any schema walks it: a context
 * keeps the unknown keys of an unknown special kind as they are, and a value nested thousands of
 * levels deep there would overflow the stack of whatever serialises it later. Iterative, so the
 * check itself cannot overflow.
 */
export function assertShallow(
  value: unknown,
  subject: string,
  kind: 'invalid_params' | 'invalid_request' = 'invalid_params',
): void {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop() as [unknown, number];
    if (current === null || typeof current !== 'object' || current instanceof Uint8Array) continue;
    if (depth >= LIMITS.paramsMaxDepth) {
      throw new FsError(kind, `${subject} nest deeper than ${LIMITS.paramsMaxDepth} levels`);
    }
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
}

/** A standalone sandbox context (e.g. from a CLI flag), with the same messages as inside params. */
export function parseSandboxContext(raw: unknown): SandboxContext | null {
  if (raw === null || raw === undefined) return null;
  assertShallow(raw, 'sandbox context');
  const result = sandboxContextSchema().safeParse(raw, safeParseOptions('sandbox context'));
  if (!result.success) throw issueToFsError(result.error);
  return result.data;
}
