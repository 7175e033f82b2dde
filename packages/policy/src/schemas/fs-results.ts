import { z } from 'zod';
import { lazySchema } from './lazy-schema.js';
import { decimalSchema, u64Schema } from './primitives.js';
import { shellInfoSchema } from './process-results.js';

/** Results of every method. Paths in results are canonical `file:` URIs, as in the reference. */

export const emptyResultSchema = lazySchema(() => z.object({}));

export const readFileResultSchema = lazySchema(() => z.object({ dataBase64: z.string() }));

export const TEXT_ENCODINGS = ['utf-8', 'utf-16le', 'utf-16be'] as const;
export const LINE_ENDINGS = ['lf', 'crlf', 'mixed', 'none'] as const;

export const readTextFileResultSchema = lazySchema(() =>
  z.object({
    /** The window's lines, decoded, with their own line endings; no BOM. */
    content: z.string(),
    /** 1-based number of the first line in `content`. */
    startLine: u64Schema,
    lineCount: u64Schema,
    totalLines: u64Schema,
    /** `maxBytes` cut the window short. */
    truncated: z.boolean(),
    encoding: z.enum(TEXT_ENCODINGS),
    bom: z.boolean(),
    lineEnding: z.enum(LINE_ENDINGS),
    sizeBytes: u64Schema,
    /**
     * Of the whole file's bytes, as fs/edit's and fs/writeFile's `expectedSha256` expect it. Absent
     * for a file larger than LIMITS.textMaxBytes: its window is read by streaming, without hashing
     * the whole file (fs/edit reads texts up to that size only).
     */
    sha256: z.string().optional(),
  }),
);

export const editResultSchema = lazySchema(() =>
  z.object({
    sha256Before: z.string(),
    sha256After: z.string(),
    replacements: u64Schema,
    /** Unified diff of the change (line endings shown as LF). */
    diff: z.string(),
  }),
);

export const getMetadataResultSchema = lazySchema(() =>
  z.object({
    isDirectory: z.boolean(),
    isFile: z.boolean(),
    isSymlink: z.boolean(),
    size: u64Schema,
    createdAtMs: z.number(),
    modifiedAtMs: z.number(),
    /**
     * Extension: the permission bits as four octal digits (`"0644"`), of the symlink's target when
     * the path is one, as the type and size are.
     */
    permissions: z.string(),
    /** Extension: the last access time (what MCP's get_file_info prints), of the target as above. */
    accessedAtMs: z.number(),
    /**
     * Extension: the target's link count; more than 1 means the file has other names, possibly
     * outside the sandbox, that a write here also changes.
     */
    hardLinks: u64Schema,
  }),
);

export const canonicalizeResultSchema = lazySchema(() => z.object({ path: z.string() }));

export const readDirectoryEntrySchema = lazySchema(() =>
  z.object({
    fileName: z.string(),
    /**
     * Set only for a name that is not valid UTF-8: `fileName` then has every byte that is not part of
     * valid UTF-8, and every `%`, written as `%XX`, so percent-decoding it gives the exact bytes.
     */
    nonUtf8Name: z.literal(true).optional(),
    isDirectory: z.boolean(),
    isFile: z.boolean(),
  }),
);
export const readDirectoryResultSchema = lazySchema(() =>
  z.object({
    entries: z.array(readDirectoryEntrySchema()),
    /** Only present (true) when the directory held more entries than a listing returns. */
    truncated: z.literal(true).optional(),
  }),
);

/**
 * `symlink` only with the `includeSymlinks` option: a link the walk did not follow (any link not
 * followed into a directory), listed rather than left out.
 */
export const walkEntrySchema = lazySchema(() =>
  z.object({ path: z.string(), kind: z.enum(['file', 'directory', 'symlink']) }),
);
export const walkErrorSchema = lazySchema(() => z.object({ path: z.string(), message: z.string() }));
export const walkResultSchema = lazySchema(() =>
  z.object({
    entries: z.array(walkEntrySchema()),
    errors: z.array(walkErrorSchema()),
    truncated: z.boolean(),
  }),
);

/**
 * A line of fs/search: at most LIMITS.searchMaxLineChars characters (`lineTruncated` when cut), no
 * line terminator. A line that is not valid UTF-8 follows the readDirectory name rule: every byte
 * that is not part of valid UTF-8, and every `%`, written as `%XX`, marked `nonUtf8Line`.
 */
const searchLineFields = lazySchema(() => ({
  line: z.string(),
  lineTruncated: z.literal(true).optional(),
  nonUtf8Line: z.literal(true).optional(),
}));
export const searchContextLineSchema = lazySchema(() =>
  z.object({ lineNumber: u64Schema, ...searchLineFields() }),
);
export const searchMatchSchema = lazySchema(() =>
  z.object({
    path: z.string(),
    lineNumber: u64Schema,
    ...searchLineFields(),
    /** Offsets into `line` in UTF-16 code units (JavaScript string indices), end exclusive. */
    submatches: z.array(z.object({ start: u64Schema, end: u64Schema })),
    before: z.array(searchContextLineSchema()).optional(),
    after: z.array(searchContextLineSchema()).optional(),
  }),
);
export const searchResultSchema = lazySchema(() =>
  z.object({
    matches: z.array(searchMatchSchema()),
    /** With `filesOnly`: the files holding a match (and `matches` is empty). */
    files: z.array(z.string()).optional(),
    truncated: z.boolean(),
    stats: z.object({ filesSearched: u64Schema, bytesSearched: u64Schema, elapsedMs: z.number() }),
  }),
);

export const globEntrySchema = lazySchema(() =>
  z.object({
    path: z.string(),
    kind: z.enum(['file', 'symlink']),
    size: u64Schema,
    modifiedAtMs: z.number(),
  }),
);
export const globResultSchema = lazySchema(() =>
  z.object({ entries: z.array(globEntrySchema()), truncated: z.boolean() }),
);

/** `copiedAcrossDevices`: the names were on two file systems, so the source was copied, then removed. */
export const renameResultSchema = lazySchema(() =>
  z.object({ copiedAcrossDevices: z.literal(true).optional() }),
);

/** Each operation of a batch, in order: its result (wire form, file bytes as base64) or its wire error. */
export const batchOutcomeSchema = lazySchema(() =>
  z.union([
    z.object({ result: z.record(z.string(), z.unknown()) }),
    z.object({
      error: z.object({
        code: z.number(),
        message: z.string(),
        data: z.looseObject({ errorKind: z.string() }),
      }),
    }),
  ]),
);
export const batchResultSchema = lazySchema(() => z.object({ results: z.array(batchOutcomeSchema()) }));

export const explainAccessResultSchema = lazySchema(() =>
  z.object({
    access: z.enum(['read', 'write', 'none']),
    /** In people's words: the rule that decided, and where the real location differs from the spelling. */
    reason: z.string(),
    /** The policy entry that decided (`file:///w/.env:deny`), absent when no entry matched. */
    entry: z.string().optional(),
    /** Set when writing is refused because the path is protected metadata (`.git`, `.agents`, `.codex`) or fs-sandbox's own code. */
    protected: z.literal(true).optional(),
  }),
);

export const openResultSchema = lazySchema(() => z.object({ handleId: z.string() }));

export const readBlockResultSchema = lazySchema(() => z.object({ chunk: z.string(), eof: z.boolean() }));

export const openForReadResultSchema = lazySchema(() =>
  z.object({ size: u64Schema, dev: decimalSchema, ino: decimalSchema }),
);

export const readRangeResultSchema = lazySchema(() => z.object({ chunk: z.string(), eof: z.boolean() }));

export const stageWriteResultSchema = lazySchema(() =>
  z.object({
    staged: z.object({ name: z.string(), dev: decimalSchema, ino: decimalSchema }),
  }),
);

/** Capabilities are listed only when true: a Codex client treats an absent bit as "unsupported". */
export const serverCapabilitiesSchema = lazySchema(() =>
  z.object({
    sandboxedFileStreaming: z.literal(true),
    /** fs/open `mode: "replace"` and fs/writeBlock: writes larger than one message, published on fs/close. */
    fileWriteStreaming: z.literal(true),
    /** fs/writeFile accepts `mode` ("overwrite" | "create") and `expectedSha256`. */
    writeFileModes: z.literal(true),
    /** Every error carries `data.errorKind`. */
    errorKinds: z.literal(true),
    /** process/* runs commands in the request's sandbox. */
    processes: z.literal(true),
    /**
     * process/start takes `tty: true`: the command runs on a pseudo-terminal allocated inside its
     * sandbox (needs bwrap and the Bun helper; elsewhere the start is refused, typed).
     */
    processTty: z.literal(true),
  }),
);

/** What `initialize` answers: only the fields and capabilities this server can honestly claim. */
export const initializeResultSchema = lazySchema(() =>
  z.object({
    sessionId: z.string(),
    environmentInfo: z.object({
      /** The shell a Codex client runs its commands with (required by the reference's client). */
      shell: shellInfoSchema(),
      executor: z.literal('fs-sandbox'),
      executorVersion: z.string(),
      cwd: z.string(),
      userHomeDir: z.string(),
      platformOs: z.string(),
      temporaryDirectories: z.array(z.string()),
      tempDir: z.string(),
      capabilities: serverCapabilitiesSchema(),
    }),
  }),
);

export const patchChangeSchema = lazySchema(() =>
  z.object({
    /** Native absolute path the hunk names. */
    path: z.string(),
    kind: z.enum(['add', 'delete', 'update']),
    /** Native absolute destination of a moved update. */
    movePath: z.string().optional(),
  }),
);

export const applyPatchResultSchema = lazySchema(() =>
  z.discriminatedUnion('status', [
    z.object({
      status: z.enum(['applied', 'dry_run']),
      /** The reference's `apply_patch` output: `Success. Updated the following files:`, then `A`/`M`/`D` lines. */
      summary: z.string(),
      changes: z.array(patchChangeSchema()),
      /** Whether what was committed can be reconstructed exactly (README "fs/applyPatch"). */
      exact: z.boolean(),
    }),
    z.object({
      status: z.literal('needs_approval'),
      reason: z.string(),
      changes: z.array(patchChangeSchema()),
    }),
  ]),
);
