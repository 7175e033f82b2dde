import { z } from 'zod';
import { decimalSchema, u64Schema } from './primitives.js';

/** Results of every fs method. Paths in results are canonical `file:` URIs, as in the reference. */

export const emptyResultSchema = z.object({});
export type EmptyResult = z.output<typeof emptyResultSchema>;

export const readFileResultSchema = z.object({ dataBase64: z.string() });
export type ReadFileResult = z.output<typeof readFileResultSchema>;

export const getMetadataResultSchema = z.object({
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  isSymlink: z.boolean(),
  size: u64Schema,
  createdAtMs: z.number(),
  modifiedAtMs: z.number(),
});
export type GetMetadataResult = z.output<typeof getMetadataResultSchema>;

export const canonicalizeResultSchema = z.object({ path: z.string() });
export type CanonicalizeResult = z.output<typeof canonicalizeResultSchema>;

export const readDirectoryEntrySchema = z.object({
  fileName: z.string(),
  isDirectory: z.boolean(),
  isFile: z.boolean(),
});
export type ReadDirectoryEntry = z.output<typeof readDirectoryEntrySchema>;
export const readDirectoryResultSchema = z.object({ entries: z.array(readDirectoryEntrySchema) });
export type ReadDirectoryResult = z.output<typeof readDirectoryResultSchema>;

export const walkEntrySchema = z.object({ path: z.string(), kind: z.enum(['file', 'directory']) });
export type WalkEntry = z.output<typeof walkEntrySchema>;
export const walkErrorSchema = z.object({ path: z.string(), message: z.string() });
export type WalkError = z.output<typeof walkErrorSchema>;
export const walkResultSchema = z.object({
  entries: z.array(walkEntrySchema),
  errors: z.array(walkErrorSchema),
  truncated: z.boolean(),
});
export type WalkResult = z.output<typeof walkResultSchema>;

export const openResultSchema = z.object({ handleId: z.string() });
export type OpenResult = z.output<typeof openResultSchema>;

export const readBlockResultSchema = z.object({ chunk: z.string(), eof: z.boolean() });
export type ReadBlockResult = z.output<typeof readBlockResultSchema>;

export const openForReadResultSchema = z.object({ size: u64Schema, dev: decimalSchema, ino: decimalSchema });
export type OpenForReadResult = z.output<typeof openForReadResultSchema>;

export const readRangeResultSchema = z.object({ chunk: z.string(), eof: z.boolean() });
export type ReadRangeResult = z.output<typeof readRangeResultSchema>;
