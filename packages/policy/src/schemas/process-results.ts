import { z } from 'zod';

/** Results and notifications of the process methods (see process-params.ts). */

/** The reference's names for the sandbox a command ran in (`none`: the context grants everything). */
export const processSandboxTypeSchema = z.enum([
  'none',
  'linuxSeccomp',
  'macosSeatbelt',
  'windowsRestrictedToken',
]);

export const processStartResultSchema = z.object({
  processId: z.string(),
  sandboxType: processSandboxTypeSchema,
});

export const processStreamSchema = z.enum(['stdout', 'stderr', 'pty']);

export const processOutputChunkSchema = z.object({
  seq: z.number().int(),
  stream: processStreamSchema,
  chunk: z.string(),
});

export const processReadResultSchema = z.object({
  chunks: z.array(processOutputChunkSchema),
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
});

export const processWriteResultSchema = z.object({
  status: z.enum(['accepted', 'unknownProcess', 'stdinClosed', 'starting']),
});

export const processTerminateResultSchema = z.object({ running: z.boolean() });

export const processSignalResultSchema = z.object({});

/** `process/output` notification. */
export const processOutputNotificationSchema = z.object({
  processId: z.string(),
  seq: z.number().int(),
  stream: processStreamSchema,
  chunk: z.string(),
  capReached: z.boolean().optional(),
});

/** `process/exited` notification. */
export const processExitedNotificationSchema = z.object({
  processId: z.string(),
  seq: z.number().int(),
  exitCode: z.number().int(),
  sandboxDenied: z.boolean(),
  timedOut: z.boolean().optional(),
});

/** `process/closed` notification: both output streams ended, nothing more comes for this id. */
export const processClosedNotificationSchema = z.object({ processId: z.string(), seq: z.number().int() });

export const shellInfoSchema = z.object({ name: z.string(), path: z.string() });

export const environmentStatusResultSchema = z.object({ status: z.literal('ready') });
