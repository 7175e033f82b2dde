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

export const patchChangeSchema = z.object({
  /** Native absolute path the hunk names. */
  path: z.string(),
  kind: z.enum(['add', 'delete', 'update']),
  /** Native absolute destination of a moved update. */
  movePath: z.string().optional(),
});

export const applyPatchResultSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.enum(['applied', 'dry_run']),
    /** The reference's `apply_patch` output: `Success. Updated the following files:`, then `A`/`M`/`D` lines. */
    summary: z.string(),
    changes: z.array(patchChangeSchema),
    /** Whether what was committed can be reconstructed exactly (README "fs/applyPatch"). */
    exact: z.boolean(),
  }),
  z.object({ status: z.literal('needs_approval'), reason: z.string(), changes: z.array(patchChangeSchema) }),
]);
