import type { z } from 'zod';

/** An object schema's fields; a discriminated union's are those of all its options. */
export function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  const options = (schema as unknown as { options?: z.ZodType[] }).options;
  if (Array.isArray(options)) return Object.assign({}, ...options.map(shapeOf));
  return (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
}

/** The schema under `.nullish()` / `.optional()` / `.nullable()` wrappers. */
export function unwrapped(schema: z.ZodType): z.ZodType {
  const inner = (schema as unknown as { unwrap?: () => z.ZodType }).unwrap;
  return typeof inner === 'function' ? unwrapped(inner.call(schema)) : schema;
}

export function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}
