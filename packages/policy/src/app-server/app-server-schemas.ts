import { z } from 'zod';
import { currentHostOs } from '../host-os.js';
import { LIMITS } from '../limits.js';
import { normalizeNativePath } from '../native-path.js';
import { lazySchema } from '../schemas/lazy-schema.js';
import { invalidTypeMessage } from '../schemas/serde-messages.js';

/**
 * The wire types of the Codex app-server's V2 surface that `fs-sandbox app-server` serves: the
 * file, watch, process and command methods, their results and their notifications, as the pinned
 * reference (`codex app-server generate-ts`) declares them.
 *
 * Unlike the exec-server params, these objects ignore keys they do not declare, as the reference
 * does: its clients of newer versions send fields this one does not know, and no field here can
 * widen anything by being misspelled (a request's policy is only ever narrowed by the server's,
 * see request-policy.ts).
 */

/**
 * A native absolute path (`AbsolutePathBuf`): refused unless absolute for this host, normalised
 * lexically (`a/../b` is `b`) as the reference does. A `file:` URI is not absolute, so it is refused
 * with the reference's text too.
 */
export const absolutePathSchema = lazySchema(() =>
  z
    .string({
      error: (issue) =>
        issue.input === undefined ? undefined : invalidTypeMessage(issue.input, 'path string'),
    })
    .transform((value, ctx) => {
      const normalized =
        Buffer.byteLength(value) > LIMITS.pathMaxBytes ? null : normalizeNativePath(currentHostOs(), value);
      if (normalized === null || value.includes('\0')) {
        const tooLong = Buffer.byteLength(value) > LIMITS.pathMaxBytes;
        ctx.addIssue({
          code: 'custom',
          message: tooLong
            ? `path is longer than ${LIMITS.pathMaxBytes} bytes`
            : 'AbsolutePathBuf deserialized without a base path',
          input: value,
        });
        return z.NEVER;
      }
      return normalized;
    }),
);

/** `Option<bool>` with serde's `default`: absent or null is `byDefault`. */
const flag = (byDefault: boolean) =>
  z
    .boolean()
    .nullish()
    .transform((value) => value ?? byDefault);

/** `bool` with `#[serde(default)]`: absent is false, null is refused as serde refuses it. */
const plainFlag = lazySchema(() => z.boolean().optional().default(false));

const u16 = lazySchema(() => z.number().int().min(0).max(65_535));

export const terminalSizeSchema = lazySchema(() => z.object({ rows: u16(), cols: u16() }));

/** Environment overrides: a string sets the variable, null unsets an inherited one. */
const envOverridesSchema = lazySchema(() => z.record(z.string(), z.string().nullable()).nullish());

// --- handshake -------------------------------------------------------------------------------

export const appInitializeParamsSchema = lazySchema(() =>
  z.object({
    clientInfo: z.object({ name: z.string(), title: z.string().nullish(), version: z.string() }),
    capabilities: z
      .object({
        experimentalApi: flag(false),
        optOutNotificationMethods: z.array(z.string()).nullish(),
      })
      .nullish(),
  }),
);

export const appInitializeResultSchema = lazySchema(() =>
  z.object({
    userAgent: z.string(),
    codexHome: z.string(),
    platformFamily: z.string(),
    platformOs: z.string(),
  }),
);

// --- files -----------------------------------------------------------------------------------

export const v2PathParamsSchema = lazySchema(() => z.object({ path: absolutePathSchema() }));
export const v2WriteFileParamsSchema = lazySchema(() =>
  z.object({ path: absolutePathSchema(), dataBase64: z.string() }),
);
export const v2CreateDirectoryParamsSchema = lazySchema(() =>
  z.object({ path: absolutePathSchema(), recursive: flag(true) }),
);
export const v2RemoveParamsSchema = lazySchema(() =>
  z.object({
    path: absolutePathSchema(),
    recursive: flag(true),
    force: flag(true),
  }),
);
export const v2CopyParamsSchema = lazySchema(() =>
  z.object({
    sourcePath: absolutePathSchema(),
    destinationPath: absolutePathSchema(),
    recursive: plainFlag(),
  }),
);

export const v2EmptyResultSchema = lazySchema(() => z.object({}));
export const v2ReadFileResultSchema = lazySchema(() => z.object({ dataBase64: z.string() }));
export const v2GetMetadataResultSchema = lazySchema(() =>
  z.object({
    isDirectory: z.boolean(),
    isFile: z.boolean(),
    isSymlink: z.boolean(),
    createdAtMs: z.number(),
    modifiedAtMs: z.number(),
    /** Extension (newer references send it too): the size in bytes. */
    size: z.number().optional(),
  }),
);
export const v2ReadDirectoryResultSchema = lazySchema(() =>
  z.object({
    entries: z.array(z.object({ fileName: z.string(), isDirectory: z.boolean(), isFile: z.boolean() })),
  }),
);

// --- watches ---------------------------------------------------------------------------------

export const watchIdSchema = lazySchema(() =>
  z.string().max(LIMITS.processIdMaxBytes, {
    message: `watchId is longer than ${LIMITS.processIdMaxBytes} characters`,
  }),
);
export const watchParamsSchema = lazySchema(() =>
  z.object({ watchId: watchIdSchema(), path: absolutePathSchema() }),
);
export const unwatchParamsSchema = lazySchema(() => z.object({ watchId: watchIdSchema() }));
export const watchResultSchema = lazySchema(() => z.object({ path: z.string() }));
export const fsChangedNotificationSchema = lazySchema(() =>
  z.object({
    watchId: z.string(),
    changedPaths: z.array(z.string()),
  }),
);

// --- processes -------------------------------------------------------------------------------

const commandSchema = lazySchema(() =>
  z.array(z.string()).max(LIMITS.processMaxArgs, {
    message: `command has more than ${LIMITS.processMaxArgs} arguments`,
  }),
);
const sessionIdSchema = lazySchema(() =>
  z.string().max(LIMITS.processIdMaxBytes, {
    message: `process id is longer than ${LIMITS.processIdMaxBytes} characters`,
  }),
);

export const processSpawnParamsSchema = lazySchema(() =>
  z.object({
    command: commandSchema(),
    processHandle: sessionIdSchema(),
    cwd: absolutePathSchema(),
    tty: plainFlag(),
    streamStdin: plainFlag(),
    streamStdoutStderr: plainFlag(),
    /** Double option: absent is the default cap, null is none. */
    outputBytesCap: z.number().int().min(0).nullable().optional(),
    /** Double option: absent is the default timeout, null is none. */
    timeoutMs: z.number().int().nullable().optional(),
    env: envOverridesSchema(),
    size: terminalSizeSchema().nullish(),
  }),
);
export const processWriteStdinParamsSchema = lazySchema(() =>
  z.object({
    processHandle: sessionIdSchema(),
    deltaBase64: z.string().nullish(),
    closeStdin: plainFlag(),
  }),
);
export const processKillParamsSchema = lazySchema(() => z.object({ processHandle: sessionIdSchema() }));
export const processResizePtyParamsSchema = lazySchema(() =>
  z.object({
    processHandle: sessionIdSchema(),
    size: terminalSizeSchema(),
  }),
);

const outputStreamSchema = lazySchema(() => z.enum(['stdout', 'stderr']));
export const v2ProcessOutputDeltaNotificationSchema = lazySchema(() =>
  z.object({
    processHandle: z.string(),
    stream: outputStreamSchema(),
    deltaBase64: z.string(),
    capReached: z.boolean(),
  }),
);
export const v2ProcessExitedNotificationSchema = lazySchema(() =>
  z.object({
    processHandle: z.string(),
    exitCode: z.number(),
    outputDrainTimedOut: z.boolean().nullish(),
    stdout: z.string(),
    stdoutCapReached: z.boolean(),
    stderr: z.string(),
    stderrCapReached: z.boolean(),
  }),
);

// --- commands --------------------------------------------------------------------------------

export const sandboxPolicySchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('dangerFullAccess') }),
    z.object({ type: z.literal('readOnly'), networkAccess: plainFlag() }),
    z.object({
      type: z.literal('externalSandbox'),
      networkAccess: z.enum(['restricted', 'enabled']).optional().default('restricted'),
    }),
    z.object({
      type: z.literal('workspaceWrite'),
      writableRoots: z.array(absolutePathSchema()).max(LIMITS.policyMaxEntries).optional().default([]),
      networkAccess: plainFlag(),
      excludeTmpdirEnvVar: plainFlag(),
      excludeSlashTmp: plainFlag(),
    }),
  ]),
);
export type V2SandboxPolicy = z.output<ReturnType<typeof sandboxPolicySchema>>;

export const commandExecParamsSchema = lazySchema(() =>
  z.object({
    command: commandSchema(),
    processId: sessionIdSchema().nullish(),
    tty: plainFlag(),
    streamStdin: plainFlag(),
    streamStdoutStderr: plainFlag(),
    outputBytesCap: z.number().int().min(0).nullish(),
    disableOutputCap: plainFlag(),
    disableTimeout: plainFlag(),
    timeoutMs: z.number().int().nullish(),
    /** Relative paths are taken under the server's cwd. */
    cwd: z.string().nullish(),
    env: envOverridesSchema(),
    size: terminalSizeSchema().nullish(),
    sandboxPolicy: sandboxPolicySchema().nullish(),
    permissionProfile: z.string().nullish(),
  }),
);
export const commandExecResultSchema = lazySchema(() =>
  z.object({
    exitCode: z.number(),
    stdout: z.string(),
    stderr: z.string(),
  }),
);
export const commandExecWriteParamsSchema = lazySchema(() =>
  z.object({
    processId: sessionIdSchema(),
    deltaBase64: z.string().nullish(),
    closeStdin: plainFlag(),
  }),
);
export const commandExecResizeParamsSchema = lazySchema(() =>
  z.object({
    processId: sessionIdSchema(),
    size: terminalSizeSchema(),
  }),
);
export const commandExecTerminateParamsSchema = lazySchema(() => z.object({ processId: sessionIdSchema() }));
export const commandExecOutputDeltaNotificationSchema = lazySchema(() =>
  z.object({
    processId: z.string(),
    stream: outputStreamSchema(),
    deltaBase64: z.string(),
    capReached: z.boolean(),
  }),
);
