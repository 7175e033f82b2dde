import { z } from 'zod';
import { TEMP_TAG } from '../temp-tag.js';
import {
  decimalSchema,
  optionalFlagSchema,
  pathUriSchema,
  sha256HexSchema,
  u64Schema,
} from './primitives.js';
import { sandboxContextSchema } from './sandbox-context.js';

/**
 * Params of every fs method (DESIGN §4, reference §4). Every params object, and every object nested
 * in one except the sandbox context, refuses keys it does not declare: an ignored `sandBox` would
 * run the request with no sandbox at all, an ignored `recursve: false` would remove a whole tree,
 * an ignored `maxDeph` would walk deeper than asked.
 */

const sandbox = sandboxContextSchema.nullish();

export const readFileParamsSchema = z.strictObject({ path: pathUriSchema, sandbox });
export type ReadFileParams = z.output<typeof readFileParamsSchema>;

export const WRITE_MODES = ['overwrite', 'create'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export const writeFileParamsSchema = z.strictObject({
  path: pathUriSchema,
  dataBase64: z.string(),
  sandbox,
  /** Extension: `create` refuses an existing target (`file_already_exists`). Default `overwrite`. */
  mode: z.enum(WRITE_MODES).nullish(),
  /** Extension: the write happens only if the current content hashes to this (`hash_mismatch`). */
  expectedSha256: sha256HexSchema.nullish(),
});
export type WriteFileParams = z.output<typeof writeFileParamsSchema>;

export const createDirectoryParamsSchema = z.strictObject({
  path: pathUriSchema,
  recursive: optionalFlagSchema,
  sandbox,
});
export type CreateDirectoryParams = z.output<typeof createDirectoryParamsSchema>;

export const getMetadataParamsSchema = z.strictObject({ path: pathUriSchema, sandbox });
export type GetMetadataParams = z.output<typeof getMetadataParamsSchema>;

export const canonicalizeParamsSchema = z.strictObject({ path: pathUriSchema, sandbox });
export type CanonicalizeParams = z.output<typeof canonicalizeParamsSchema>;

export const readDirectoryParamsSchema = z.strictObject({ path: pathUriSchema, sandbox });
export type ReadDirectoryParams = z.output<typeof readDirectoryParamsSchema>;

export const removeParamsSchema = z.strictObject({
  path: pathUriSchema,
  recursive: optionalFlagSchema,
  force: optionalFlagSchema,
  sandbox,
});
export type RemoveParams = z.output<typeof removeParamsSchema>;

export const copyParamsSchema = z.strictObject({
  sourcePath: pathUriSchema,
  destinationPath: pathUriSchema,
  recursive: z.boolean(),
  sandbox,
});
export type CopyParams = z.output<typeof copyParamsSchema>;

export const walkOptionsSchema = z.strictObject({
  maxDepth: u64Schema,
  maxDirectories: u64Schema,
  maxEntries: u64Schema,
  followDirectorySymlinks: z.boolean(),
  pruneHiddenDirectories: z.boolean().nullish(),
});
export type WalkOptions = z.output<typeof walkOptionsSchema>;

export const walkParamsSchema = z.strictObject({ path: pathUriSchema, options: walkOptionsSchema, sandbox });
export type WalkParams = z.output<typeof walkParamsSchema>;

// Its byte length is a limit (invalid_request, like the other limits), checked after parsing.
export const handleIdSchema = z.string();

export const openParamsSchema = z.strictObject({
  handleId: handleIdSchema,
  path: pathUriSchema,
  // `replace` is the reference's write streaming, which this server does not offer; it is named
  // here so `append` still gets the reference's message, and refused after parsing with a clear one.
  mode: z.enum(['read', 'replace']).nullish(),
  sandbox,
});
export type OpenParams = z.output<typeof openParamsSchema>;

export const readBlockParamsSchema = z.strictObject({
  handleId: handleIdSchema,
  offset: u64Schema,
  len: u64Schema,
});
export type ReadBlockParams = z.output<typeof readBlockParamsSchema>;

export const closeParamsSchema = z.strictObject({ handleId: handleIdSchema });
export type CloseParams = z.output<typeof closeParamsSchema>;

/** Internal helper op behind fs/open: validates a readable regular file and reports its identity. */
export const openForReadParamsSchema = z.strictObject({ path: pathUriSchema, sandbox });
export type OpenForReadParams = z.output<typeof openForReadParamsSchema>;

export const fileIdentitySchema = z.strictObject({ dev: decimalSchema, ino: decimalSchema });
export type FileIdentity = z.output<typeof fileIdentitySchema>;

/** Internal helper op behind fs/readBlock: one positional read, refused if the file was swapped. */
export const readRangeParamsSchema = z.strictObject({
  path: pathUriSchema,
  offset: u64Schema,
  len: u64Schema,
  identity: fileIdentitySchema.nullish(),
  sandbox,
});
export type ReadRangeParams = z.output<typeof readRangeParamsSchema>;

/**
 * Internal helper op the broker runs after it killed a helper mid-write: removes the temporary
 * files that helper left (only names carrying its tag) in `path`, or in the tree below it.
 */
export const removeTempsParamsSchema = z.strictObject({
  path: pathUriSchema,
  tag: z.string().regex(TEMP_TAG),
  recursive: z.boolean(),
  sandbox,
});
export type RemoveTempsParams = z.output<typeof removeTempsParamsSchema>;
