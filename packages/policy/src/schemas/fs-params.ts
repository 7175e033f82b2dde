import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { TEMP_TAG } from '../temp-tag.js';
import {
  decimalSchema,
  optionalFlagSchema,
  requestPathSchema,
  sha256HexSchema,
  u64Schema,
} from './primitives.js';
import { sandboxContextSchema } from './sandbox-context.js';

/**
 * Params of every method (the method table, method-table.ts, says what each one is for). Every
 * params object, and every object nested in one except the sandbox context, refuses keys it does
 * not declare: an ignored `sandBox` would run the request with no sandbox at all, an ignored
 * `recursve: false` would remove a whole tree, an ignored `maxDeph` would walk deeper than asked.
 * Path params are parsed once here and stay taken apart (`requestPathSchema`).
 */

const sandbox = sandboxContextSchema.nullish();

export const readFileParamsSchema = z.strictObject({ path: requestPathSchema, sandbox });

export const WRITE_MODES = ['overwrite', 'create'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export const writeFileParamsSchema = z.strictObject({
  path: requestPathSchema,
  dataBase64: z.string(),
  sandbox,
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
});

export const createDirectoryParamsSchema = z.strictObject({
  path: requestPathSchema,
  recursive: optionalFlagSchema(true),
  sandbox,
});

export const getMetadataParamsSchema = z.strictObject({ path: requestPathSchema, sandbox });

export const canonicalizeParamsSchema = z.strictObject({ path: requestPathSchema, sandbox });

export const readDirectoryParamsSchema = z.strictObject({ path: requestPathSchema, sandbox });

export const removeParamsSchema = z.strictObject({
  path: requestPathSchema,
  recursive: optionalFlagSchema(true),
  force: optionalFlagSchema(true),
  sandbox,
});

export const copyParamsSchema = z.strictObject({
  sourcePath: requestPathSchema,
  destinationPath: requestPathSchema,
  recursive: z.boolean(),
  sandbox,
});

export const renameParamsSchema = z.strictObject({
  sourcePath: requestPathSchema,
  destinationPath: requestPathSchema,
  overwrite: optionalFlagSchema(false),
  sandbox,
});

/**
 * One operation of an fs/batch: a method name and its params, checked against that method's own
 * schema by the broker (the batch's schema cannot name the methods without importing the table).
 * The batch's one sandbox applies to all of them, so an operation's params carry none.
 */
export const batchOperationSchema = z.strictObject({
  method: z.string(),
  params: z
    .record(z.string(), z.unknown())
    .nullish()
    .transform((params) => params ?? {}),
});

export const batchParamsSchema = z.strictObject({
  operations: z.array(batchOperationSchema).max(LIMITS.batchMaxOperations, {
    message: `fs/batch takes at most ${LIMITS.batchMaxOperations} operations`,
  }),
  sandbox,
});

export const explainAccessParamsSchema = z.strictObject({ path: requestPathSchema, sandbox });

/** A walk bound: absent or null is the most the server allows (LIMITS), so a caller names only what it narrows. */
const walkBoundSchema = (most: number) => u64Schema.nullish().transform((value) => value ?? most);

export const walkOptionsSchema = z.strictObject({
  maxDepth: walkBoundSchema(LIMITS.walkMaxDepth),
  maxDirectories: walkBoundSchema(LIMITS.walkMaxDirectories),
  maxEntries: walkBoundSchema(LIMITS.walkMaxEntries),
  followDirectorySymlinks: optionalFlagSchema(false),
  pruneHiddenDirectories: optionalFlagSchema(false),
});

export const walkParamsSchema = z.strictObject({
  path: requestPathSchema,
  // Without options the walk goes as far as the limits allow.
  options: walkOptionsSchema.nullish().transform((options) => options ?? walkOptionsSchema.parse({})),
  sandbox,
});

// Its byte length is a limit (invalid_request, like the other limits), checked after parsing.
export const handleIdSchema = z.string();

export const openParamsSchema = z.strictObject({
  handleId: handleIdSchema,
  path: requestPathSchema,
  // `replace` is the reference's write streaming, which this server does not offer; it is named
  // here so `append` still gets the reference's message, and refused after parsing with a clear one.
  mode: z.enum(['read', 'replace']).nullish(),
  sandbox,
});

export const readBlockParamsSchema = z.strictObject({
  handleId: handleIdSchema,
  offset: u64Schema,
  len: u64Schema,
});

export const closeParamsSchema = z.strictObject({ handleId: handleIdSchema });

/** Internal helper op behind fs/open: validates a readable regular file and reports its identity. */
export const openForReadParamsSchema = z.strictObject({ path: requestPathSchema, sandbox });

export const fileIdentitySchema = z.strictObject({ dev: decimalSchema, ino: decimalSchema });

/** Internal helper op behind fs/readBlock: one positional read, refused if the file was swapped. */
export const readRangeParamsSchema = z.strictObject({
  path: requestPathSchema,
  offset: u64Schema,
  len: u64Schema,
  identity: fileIdentitySchema.nullish(),
  sandbox,
});

/**
 * Internal helper op the broker runs after it killed a helper mid-write: removes the temporary
 * files that helper left (only names carrying its tag) in `path`, or in the tree below it.
 */
export const removeTempsParamsSchema = z.strictObject({
  path: requestPathSchema,
  tag: z.string().regex(TEMP_TAG),
  recursive: z.boolean(),
  sandbox,
});

/**
 * The handshake's first request. Like the reference, it accepts fields beyond `clientName` (clients
 * send their version and capabilities there), so this is the one params object that is not strict.
 */
export const initializeParamsSchema = z.looseObject({ clientName: z.string() });
