import { z } from 'zod';
import { lazySchema } from './lazy-schema.js';

/** Results and notifications of the process methods (see process-params.ts). */

/** The reference's names for the sandbox a command ran in (`none`: the context grants everything). */
export const processSandboxTypeSchema = lazySchema(() =>
  z.enum(['none', 'linuxSeccomp', 'macosSeatbelt', 'windowsRestrictedToken']),
);

export const processStartResultSchema = lazySchema(() =>
  z.object({
    processId: z.string(),
    sandboxType: processSandboxTypeSchema(),
  }),
);

export const processStreamSchema = lazySchema(() => z.enum(['stdout', 'stderr', 'pty']));

export const processOutputChunkSchema = lazySchema(() =>
  z.object({
    seq: z.number().int(),
    stream: processStreamSchema(),
    chunk: z.string(),
  }),
);

export const processReadResultSchema = lazySchema(() =>
  z.object({
    chunks: z.array(processOutputChunkSchema()),
    nextSeq: z.number().int(),
    exited: z.boolean(),
    exitCode: z.number().int().nullable(),
    closed: z.boolean(),
    failure: z.string().nullable(),
    sandboxDenied: z.boolean(),
    /** Output beyond `outputBytesCap` was dropped. */
    capReached: z.boolean(),
    /** The command was killed because it ran past `timeoutMs`. */
    timedOut: z.boolean(),
  }),
);

export const processWriteResultSchema = lazySchema(() =>
  z.object({
    status: z.enum(['accepted', 'unknownProcess', 'stdinClosed', 'starting']),
  }),
);

export const processTerminateResultSchema = lazySchema(() => z.object({ running: z.boolean() }));

export const processSignalResultSchema = lazySchema(() => z.object({}));

/** `process/output` notification. */
export const processOutputNotificationSchema = lazySchema(() =>
  z.object({
    processId: z.string(),
    seq: z.number().int(),
    stream: processStreamSchema(),
    chunk: z.string(),
    capReached: z.boolean().optional(),
  }),
);

/** `process/exited` notification. */
export const processExitedNotificationSchema = lazySchema(() =>
  z.object({
    processId: z.string(),
    seq: z.number().int(),
    exitCode: z.number().int(),
    sandboxDenied: z.boolean(),
    timedOut: z.boolean().optional(),
  }),
);

/** `process/closed` notification: both output streams ended, nothing more comes for this id. */
export const processClosedNotificationSchema = lazySchema(() =>
  z.object({ processId: z.string(), seq: z.number().int() }),
);

export const shellInfoSchema = lazySchema(() => z.object({ name: z.string(), path: z.string() }));

export const environmentStatusResultSchema = lazySchema(() => z.object({ status: z.literal('ready') }));
