import { z } from 'zod';
import { ERROR_KINDS } from '../error-kinds.js';
import { HELPER_OPERATIONS } from '../methods.js';
import { decimalSchema, u64Schema } from './primitives.js';

/** The broker <-> helper line protocol (COMMON.md "Helper protocol") and the wire error shape. */

export const wireErrorSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.looseObject({ errorKind: z.enum(ERROR_KINDS) }),
});

export const BINARY_FIELDS = ['dataBase64', 'chunk'] as const;
export type BinaryField = (typeof BINARY_FIELDS)[number];

/** Raw bytes following the JSON line stand for `params[field]` / `response[field]`. */
export const binaryFramingSchema = z.object({ field: z.enum(BINARY_FIELDS), length: u64Schema });
export type BinaryFraming = z.output<typeof binaryFramingSchema>;

/** dev/ino of a bound root as the broker saw it; the warm helper compares before acting. */
export const freshnessEntrySchema = z.object({ path: z.string(), dev: decimalSchema, ino: decimalSchema });
export type FreshnessEntry = z.output<typeof freshnessEntrySchema>;

export const helperRequestSchema = z.object({
  operation: z.enum(HELPER_OPERATIONS),
  // Validated per operation with paramsSchemaFor(operation) once the operation is known.
  params: z.unknown(),
  freshness: z.array(freshnessEntrySchema).nullish(),
  binary: binaryFramingSchema.nullish(),
});
export type HelperRequestLine = z.output<typeof helperRequestSchema>;

export const helperResponseSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('ok'),
    payload: z.object({ operation: z.enum(HELPER_OPERATIONS), response: z.unknown() }),
    binary: binaryFramingSchema.nullish(),
  }),
  z.object({ status: z.literal('error'), payload: wireErrorSchema }),
]);
export type HelperResponseLine = z.output<typeof helperResponseSchema>;
