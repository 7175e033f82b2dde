import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { lazySchema } from './lazy-schema.js';
import { requestPathSchema } from './primitives.js';
import { sandboxFieldSchema } from './sandbox-context.js';

/**
 * Params of the process methods, as the Codex exec-server's client sends them: `process/start` runs
 * one command, `process/read` returns its retained output, `process/write` feeds its stdin,
 * `process/signal` and `process/terminate` stop it. Process ids are chosen by the client and scoped
 * to its connection. Objects are strict, like every other method's params, so every field the
 * reference's client sends is named here (`metadata` is accepted and unused).
 */

export const processIdSchema = lazySchema(() => z.string().min(1).max(LIMITS.processIdMaxBytes));

/** How the command's environment is built from the broker's (see the README, "Commands"). */
export const execEnvPolicySchema = lazySchema(() =>
  z.strictObject({
    inherit: z.enum(['all', 'core', 'none']),
    ignoreDefaultExcludes: z.boolean(),
    exclude: z.array(z.string()),
    set: z.record(z.string(), z.string()),
    includeOnly: z.array(z.string()),
  }),
);

const positiveInt = lazySchema(() => z.number().int().positive());

/** A terminal dimension: what the kernel's winsize holds (16 bits), never 0. */
const terminalDimension = lazySchema(() => positiveInt().max(65_535));

/**
 * The reference's `ManagedNetworkSandboxContext`: the loopback ports of the client's own proxy,
 * which the command must still reach when `enforceManagedNetwork` is set, and whether it may bind
 * local sockets. Lenient like the reference's (defaults, unknown keys ignored): newer clients add
 * fields this version does not use, and every field it does use fails closed when missing.
 */
export const managedNetworkSchema = lazySchema(() =>
  z.object({
    loopbackPorts: z
      .array(z.number().int().min(1).max(65535))
      .max(LIMITS.networkMaxManagedPorts, {
        message: `managedNetwork.loopbackPorts may name at most ${LIMITS.networkMaxManagedPorts} ports`,
      })
      .default([]),
    allowLocalBinding: z.boolean().default(false),
  }),
);

export const processStartParamsSchema = lazySchema(() =>
  z.strictObject({
    processId: processIdSchema(),
    argv: z.array(z.string()).min(1, { message: 'argv must not be empty' }).max(LIMITS.processMaxArgs),
    cwd: requestPathSchema,
    env: z.record(z.string(), z.string()),
    envPolicy: execEnvPolicySchema().nullish(),
    tty: z.boolean(),
    pipeStdin: z.boolean().default(false),
    arg0: z.string().nullish(),
    sandbox: sandboxFieldSchema(),
    enforceManagedNetwork: z.boolean().default(false),
    managedNetwork: managedNetworkSchema().nullish(),
    metadata: z.unknown().optional(),
    /** Beyond the reference (as the app-server's `command/exec` names them). */
    outputBytesCap: positiveInt().nullish(),
    timeoutMs: positiveInt().max(LIMITS.processMaxTimeoutMs).nullish(),
    /**
     * Beyond the reference: the terminal's size with `tty: true` (the reference's is always 24 rows
     * of 80 columns, which is also the default here).
     */
    size: z.strictObject({ rows: terminalDimension(), cols: terminalDimension() }).nullish(),
  }),
);

export const processReadParamsSchema = lazySchema(() =>
  z.strictObject({
    processId: processIdSchema(),
    afterSeq: z.number().int().nonnegative().nullish(),
    maxBytes: positiveInt().nullish(),
    waitMs: z.number().int().nonnegative().max(LIMITS.processReadMaxWaitMs).nullish(),
  }),
);

export const processWriteParamsSchema = lazySchema(() =>
  z.strictObject({
    processId: processIdSchema(),
    /** Base64 bytes for the command's stdin. */
    chunk: z.base64(),
    writeId: z.string(),
    /**
     * Beyond the reference (whose wire cannot end a stdin): after `chunk`, the command's stdin is
     * closed and it reads EOF. The library's remote commands send it when their stdin ends.
     */
    closeStdin: z.boolean().optional(),
  }),
);

export const processSignalParamsSchema = lazySchema(() =>
  z.strictObject({
    processId: processIdSchema(),
    signal: z.enum(['interrupt']),
  }),
);

export const processTerminateParamsSchema = lazySchema(() =>
  z.strictObject({ processId: processIdSchema() }),
);

/** `environment/info` and `environment/status` take no params (an empty object or none). */
export const environmentParamsSchema = lazySchema(() => z.strictObject({}));
