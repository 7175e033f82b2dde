import { z } from 'zod';
import { decimalSchema, u64Schema } from './primitives.js';

/** Results of every method. Paths in results are canonical `file:` URIs, as in the reference. */

export const emptyResultSchema = z.object({});

export const readFileResultSchema = z.object({ dataBase64: z.string() });

export const getMetadataResultSchema = z.object({
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  isSymlink: z.boolean(),
  size: u64Schema,
  createdAtMs: z.number(),
  modifiedAtMs: z.number(),
});

export const canonicalizeResultSchema = z.object({ path: z.string() });

export const readDirectoryEntrySchema = z.object({
  fileName: z.string(),
  /**
   * Set only for a name that is not valid UTF-8: `fileName` then has every byte that is not part of
   * valid UTF-8, and every `%`, written as `%XX`, so percent-decoding it gives the exact bytes.
   */
  nonUtf8Name: z.literal(true).optional(),
  isDirectory: z.boolean(),
  isFile: z.boolean(),
});
export const readDirectoryResultSchema = z.object({
  entries: z.array(readDirectoryEntrySchema),
  /** Only present (true) when the directory held more entries than a listing returns. */
  truncated: z.literal(true).optional(),
});

/** `symlink`: a link the walk did not follow (any link not followed into a directory), listed rather than dropped. */
export const walkEntrySchema = z.object({ path: z.string(), kind: z.enum(['file', 'directory', 'symlink']) });
export const walkErrorSchema = z.object({ path: z.string(), message: z.string() });
export const walkResultSchema = z.object({
  entries: z.array(walkEntrySchema),
  errors: z.array(walkErrorSchema),
  truncated: z.boolean(),
});

/** `copiedAcrossDevices`: the names were on two file systems, so the source was copied, then removed. */
export const renameResultSchema = z.object({ copiedAcrossDevices: z.literal(true).optional() });

/** Each operation of a batch, in order: its result (wire form, file bytes as base64) or its wire error. */
export const batchOutcomeSchema = z.union([
  z.object({ result: z.record(z.string(), z.unknown()) }),
  z.object({
    error: z.object({
      code: z.number(),
      message: z.string(),
      data: z.looseObject({ errorKind: z.string() }),
    }),
  }),
]);
export const batchResultSchema = z.object({ results: z.array(batchOutcomeSchema) });

export const explainAccessResultSchema = z.object({
  access: z.enum(['read', 'write', 'none']),
  /** In people's words: the rule that decided, and where the real location differs from the spelling. */
  reason: z.string(),
  /** The policy entry that decided (`file:///w/.env:deny`), absent when no entry matched. */
  entry: z.string().optional(),
  /** Set when writing is refused because the path is protected metadata (`.git`, `.agents`, `.codex`) or fs-sandbox's own code. */
  protected: z.literal(true).optional(),
});

export const openResultSchema = z.object({ handleId: z.string() });

export const readBlockResultSchema = z.object({ chunk: z.string(), eof: z.boolean() });

export const openForReadResultSchema = z.object({ size: u64Schema, dev: decimalSchema, ino: decimalSchema });

export const readRangeResultSchema = z.object({ chunk: z.string(), eof: z.boolean() });

/**
 * Capabilities are listed only when true: a Codex client treats an absent bit as "unsupported", so
 * leaving out `fileWriteStreaming` keeps it from ever sending fs/open `mode:"replace"` or fs/writeBlock.
 */
export const serverCapabilitiesSchema = z.object({
  sandboxedFileStreaming: z.literal(true),
  /** fs/writeFile accepts `mode` ("overwrite" | "create") and `expectedSha256`. */
  writeFileModes: z.literal(true),
  /** Every error carries `data.errorKind`. */
  errorKinds: z.literal(true),
});

/** What `initialize` answers: only the fields and capabilities this server can honestly claim. */
export const initializeResultSchema = z.object({
  sessionId: z.string(),
  environmentInfo: z.object({
    executor: z.literal('fs-sandbox'),
    executorVersion: z.string(),
    cwd: z.string(),
    userHomeDir: z.string(),
    platformOs: z.string(),
    temporaryDirectories: z.array(z.string()),
    tempDir: z.string(),
    capabilities: serverCapabilitiesSchema,
  }),
});
