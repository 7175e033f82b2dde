import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { STAGED_NAME, TEMP_TAG } from '../temp-tag.js';
import { lazySchema } from './lazy-schema.js';
import {
  decimalSchema,
  optionalFlagSchema,
  requestPathSchema,
  sha256HexSchema,
  u64Schema,
} from './primitives.js';
import { sandboxFieldSchema } from './sandbox-context.js';

/**
 * Params of every method (the method table, method-table.ts, says what each one is for). Every
 * params object, and every object nested in one except the sandbox context, refuses keys it does
 * not declare: an ignored `sandBox` would run the request with no sandbox at all, an ignored
 * `recursve: false` would remove a whole tree, an ignored `maxDeph` would walk deeper than asked.
 * Path params are parsed once here and stay taken apart (`requestPathSchema`).
 */

export const readFileParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

export const WRITE_MODES = ['overwrite', 'create'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export const writeFileParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    dataBase64: z.string(),
    sandbox: sandboxFieldSchema(),
    /** Extension: `create` refuses an existing target (`file_already_exists`). Default `overwrite`. */
    mode: z
      .enum(WRITE_MODES)
      .nullish()
      .transform((mode) => mode ?? 'overwrite'),
    /** Extension: the write happens only if the current content hashes to this (`hash_mismatch`). */
    expectedSha256: sha256HexSchema.nullish(),
    /**
     * Extension: the file's permission bits as octal (`"0600"`), for a new file and for the one it
     * replaces. Default: a new file gets 0666 under the umask, a replaced file keeps its mode.
     */
    permissions: z
      .string()
      .regex(/^0?[0-7]{3}$/, {
        message: 'permissions must be three octal digits such as "0644" (no setuid, setgid or sticky bit)',
      })
      .nullish(),
  }),
);

/** A line count or line number of fs/readTextFile's window; absent means "not this window". */
const textWindowSchema = lazySchema(() => u64Schema.nullish());

export const readTextFileParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    /** 1-based first line; with `limit`, the window `line`..`line + limit - 1`. */
    line: textWindowSchema(),
    limit: textWindowSchema(),
    /** The first or last N lines; each excludes the other and `line`/`limit`. */
    head: textWindowSchema(),
    tail: textWindowSchema(),
    /** Most UTF-8 bytes of `content` returned (`truncated: true` when it cut the window). */
    maxBytes: u64Schema.nullish().transform((value) => value ?? LIMITS.textMaxBytes),
    sandbox: sandboxFieldSchema(),
  }),
);

export const textEditSchema = lazySchema(() =>
  z.strictObject({
    oldText: z.string(),
    newText: z.string(),
    /** Replace every occurrence; without it, a text found more than once is `ambiguous_text_match`. */
    replaceAll: optionalFlagSchema(false),
  }),
);

export const editParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    /** Applied in order to the running text, all or nothing. */
    edits: z.array(textEditSchema()),
    /** The edit happens only if the current content hashes to this (`hash_mismatch`). */
    expectedSha256: sha256HexSchema.nullish(),
    /** Compute the result and the diff, write nothing. */
    dryRun: optionalFlagSchema(false),
    sandbox: sandboxFieldSchema(),
  }),
);

export const createDirectoryParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    recursive: optionalFlagSchema(true),
    sandbox: sandboxFieldSchema(),
  }),
);

export const getMetadataParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

export const canonicalizeParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

export const readDirectoryParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

export const removeParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    recursive: optionalFlagSchema(true),
    force: optionalFlagSchema(true),
    sandbox: sandboxFieldSchema(),
  }),
);

export const copyParamsSchema = lazySchema(() =>
  z.strictObject({
    sourcePath: requestPathSchema,
    destinationPath: requestPathSchema,
    recursive: z.boolean(),
    /**
     * Extension: `false` never replaces the destination, checked when the copy lands (link(2) or an
     * exclusive mkdir fail if the name exists then), not before. Default true, the reference's copy.
     */
    overwrite: optionalFlagSchema(true),
    sandbox: sandboxFieldSchema(),
  }),
);

export const renameParamsSchema = lazySchema(() =>
  z.strictObject({
    sourcePath: requestPathSchema,
    destinationPath: requestPathSchema,
    overwrite: optionalFlagSchema(false),
    sandbox: sandboxFieldSchema(),
  }),
);

/**
 * One operation of an fs/batch: a method name and its params, checked against that method's own
 * schema by the broker (the batch's schema cannot name the methods without importing the table).
 * The batch's one sandbox applies to all of them, so an operation's params carry none.
 */
export const batchOperationSchema = lazySchema(() =>
  z.strictObject({
    method: z.string(),
    params: z
      .record(z.string(), z.unknown())
      .nullish()
      .transform((params) => params ?? {}),
  }),
);

export const batchParamsSchema = lazySchema(() =>
  z.strictObject({
    operations: z.array(batchOperationSchema()).max(LIMITS.batchMaxOperations, {
      message: `fs/batch takes at most ${LIMITS.batchMaxOperations} operations`,
    }),
    sandbox: sandboxFieldSchema(),
  }),
);

export const explainAccessParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

/** A walk bound: absent or null is the most the server allows (LIMITS), so a caller names only what it narrows. */
const walkBoundSchema = (most: number) => u64Schema.nullish().transform((value) => value ?? most);

export const walkOptionsSchema = lazySchema(() =>
  z.strictObject({
    maxDepth: walkBoundSchema(LIMITS.walkMaxDepth),
    maxDirectories: walkBoundSchema(LIMITS.walkMaxDirectories),
    maxEntries: walkBoundSchema(LIMITS.walkMaxEntries),
    followDirectorySymlinks: optionalFlagSchema(false),
    pruneHiddenDirectories: optionalFlagSchema(false),
    /**
     * Extension: list the links the walk does not follow as `kind: "symlink"`. Off by default, since
     * the reference leaves them out and its client decodes only `file` and `directory`.
     */
    includeSymlinks: optionalFlagSchema(false),
  }),
);

export const walkParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    // Without options the walk goes as far as the limits allow.
    options: walkOptionsSchema()
      .nullish()
      .transform((options) => options ?? walkOptionsSchema().parse({})),
    sandbox: sandboxFieldSchema(),
  }),
);

/** A count from 1 to `most`, `fallback` when absent or null. */
const boundedCountSchema = (fallback: number, most: number) =>
  u64Schema
    .refine((n) => n >= 1 && n <= most, { message: `expected a number from 1 to ${most}` })
    .nullish()
    .transform((value) => value ?? fallback);

/** ripgrep/globset globs, relative to the searched path; a leading `!` excludes. */
const globListSchema = lazySchema(() => z.array(z.string().min(1)).max(256));

export const searchParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    pattern: z
      .string()
      .min(1)
      .max(64 * 1024),
    fixedStrings: optionalFlagSchema(false),
    caseSensitive: optionalFlagSchema(true),
    include: globListSchema()
      .nullish()
      .transform((globs) => globs ?? []),
    exclude: globListSchema()
      .nullish()
      .transform((globs) => globs ?? []),
    includeIgnored: optionalFlagSchema(false),
    includeHidden: optionalFlagSchema(false),
    contextLines: u64Schema
      .refine((n) => n <= LIMITS.searchMaxContextLines, {
        message: `contextLines must be from 0 to ${LIMITS.searchMaxContextLines}`,
      })
      .nullish()
      .transform((value) => value ?? 0),
    maxResults: boundedCountSchema(LIMITS.searchDefaultResults, LIMITS.searchMaxResults),
    filesOnly: optionalFlagSchema(false),
    sandbox: sandboxFieldSchema(),
  }),
);

export const globParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    patterns: globListSchema().min(1),
    includeIgnored: optionalFlagSchema(false),
    includeHidden: optionalFlagSchema(false),
    maxResults: boundedCountSchema(LIMITS.globDefaultResults, LIMITS.globMaxResults),
    sandbox: sandboxFieldSchema(),
  }),
);

// Its byte length is a limit (invalid_request, like the other limits), checked after parsing.
export const handleIdSchema = lazySchema(() => z.string());

export const openParamsSchema = lazySchema(() =>
  z.strictObject({
    handleId: handleIdSchema(),
    path: requestPathSchema,
    /** `replace`: a write handle; the blocks written replace the file atomically on fs/close. */
    mode: z
      .enum(['read', 'replace'])
      .nullish()
      .transform((mode) => mode ?? 'read'),
    sandbox: sandboxFieldSchema(),
  }),
);

export const readBlockParamsSchema = lazySchema(() =>
  z.strictObject({
    handleId: handleIdSchema(),
    offset: u64Schema,
    len: u64Schema,
  }),
);

export const writeBlockParamsSchema = lazySchema(() =>
  z.strictObject({
    handleId: handleIdSchema(),
    offset: u64Schema,
    chunk: z.string(),
  }),
);

export const closeParamsSchema = lazySchema(() => z.strictObject({ handleId: handleIdSchema() }));

/** Internal helper op behind fs/open: validates a readable regular file and reports its identity. */
export const openForReadParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

export const fileIdentitySchema = lazySchema(() =>
  z.strictObject({ dev: decimalSchema, ino: decimalSchema }),
);

/** Internal helper op behind fs/readBlock: one positional read, refused if the file was swapped. */
export const readRangeParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    offset: u64Schema,
    len: u64Schema,
    identity: fileIdentitySchema().nullish(),
    sandbox: sandboxFieldSchema(),
  }),
);

/**
 * The staging file of a write handle: a temporary name beside the target, made by fs/stageWrite,
 * and the identity it had then. Every later step finds it again through the target's directory and
 * refuses a name that no longer holds that very file.
 */
const stagedFileSchema = lazySchema(() =>
  z.strictObject({
    name: z.string().regex(STAGED_NAME),
    dev: decimalSchema,
    ino: decimalSchema,
  }),
);

/** Internal helper op behind fs/open `mode: "replace"`: checks the target is writable, makes the staging file. */
export const stageWriteParamsSchema = lazySchema(() =>
  z.strictObject({ path: requestPathSchema, sandbox: sandboxFieldSchema() }),
);

/** Internal helper op behind fs/writeBlock: one positional write into the staging file. */
export const writeRangeParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    staged: stagedFileSchema(),
    offset: u64Schema,
    chunk: z.string(),
    sandbox: sandboxFieldSchema(),
  }),
);

/** Internal helper ops behind fs/close of a write handle (publish) and its abandonment (discard). */
export const stagedFileParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    staged: stagedFileSchema(),
    sandbox: sandboxFieldSchema(),
  }),
);

/**
 * Internal helper op the broker runs after it killed a helper mid-write: removes the temporary
 * files that helper left (only names carrying its tag) in `path`, or in the tree below it.
 */
export const removeTempsParamsSchema = lazySchema(() =>
  z.strictObject({
    path: requestPathSchema,
    tag: z.string().regex(TEMP_TAG),
    recursive: z.boolean(),
    sandbox: sandboxFieldSchema(),
  }),
);

/**
 * The handshake's first request. Like the reference, it accepts fields beyond `clientName` (clients
 * send their version and capabilities there), so this is the one params object that is not strict.
 */
export const initializeParamsSchema = lazySchema(() => z.looseObject({ clientName: z.string() }));

/** The reference's approval modes (`AskForApproval`), as the assessment of a patch reads them. */
export const approvalPolicySchema = lazySchema(() =>
  z.union([
    z.enum(['never', 'on-request', 'on-failure', 'unless-trusted']),
    z.strictObject({ granular: z.strictObject({ sandbox_approval: z.boolean() }) }),
  ]),
);

export const applyPatchParamsSchema = lazySchema(() =>
  z.strictObject({
    /** The patch text, `*** Begin Patch` … `*** End Patch` (a heredoc wrapper is accepted). */
    patch: z.string(),
    /** The directory the patch's relative paths are under; default: the sandbox context's cwd. */
    cwd: requestPathSchema.nullish(),
    sandbox: sandboxFieldSchema(),
    approvalPolicy: approvalPolicySchema()
      .nullish()
      .transform((policy) => policy ?? 'on-request'),
    /** Extension: all files or none (see README "fs/applyPatch"). */
    atomic: optionalFlagSchema(false),
    /** Extension: compute and check everything, write nothing. */
    dryRun: optionalFlagSchema(false),
  }),
);
