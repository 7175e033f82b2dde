import type { z } from 'zod';
import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import type {
  NotificationSchemas,
  NotificationsOf,
  ParamsIn,
  PathAccess,
  WireResultOf,
} from '../method-table.js';
import { nativeToPathUri } from '../path-uri.js';
import type { LazySchema } from '../schemas/lazy-schema.js';
import { assertShallow } from '../schemas/method-schemas.js';
import { issueToFsError, safeParseOptions } from '../schemas/serde-messages.js';
import * as v2 from './app-server-schemas.js';

/**
 * The app-server's method table: the V2 surface of `codex app-server` that `fs-sandbox app-server`
 * serves (files, watches, processes, commands), one descriptor per method, beside the exec-server
 * table (`method-table.ts`) whose helper operations do the work. The two tables share names
 * (`fs/readFile` is a method of both, with other params), which is why this one is its own.
 *
 * - `params`, `result`, `notifications`: the zod schemas of the wire types (app-server-schemas.ts).
 * - `operation`: a file method is one exec-server helper operation, run under the server's policy.
 *   Its params are the V2 params with every path field (`paths`) turned from a native path into a
 *   URI, the rest passed as they are (each V2 file method's fields are a subset of its operation's),
 *   and its result is the operation's, narrowed by `fromOperation` where the V2 type has fewer
 *   fields; so every V2 file request goes through the same parse, pre-checks, sandbox and helper
 *   guard as the exec-server's. Methods without one keep state on their connection (watches,
 *   processes) and are answered by the server.
 * - `experimental`: answered only when the client's `initialize` opted into `experimentalApi`
 *   (the reference gates exactly these; `command/exec` gates its `permissionProfile` field).
 * - `paths`: path params and their access, for the audit log, the docs and the conversion above.
 */

type OperationOf =
  | 'fs/readFile'
  | 'fs/writeFile'
  | 'fs/createDirectory'
  | 'fs/getMetadata'
  | 'fs/readDirectory'
  | 'fs/remove'
  | 'fs/copy';

export interface AppServerMethodDescriptor {
  readonly summary: string;
  readonly params: LazySchema;
  readonly result: LazySchema;
  readonly paths: Readonly<Record<string, PathAccess>>;
  readonly notifications?: NotificationSchemas;
  readonly experimental?: boolean;
  readonly operation?: {
    readonly method: OperationOf;
    fromOperation?(result: never): unknown;
  };
}

/** A method that acts on one running process or command: params in, an empty result out. */
function control<P extends LazySchema>(summary: string, params: P, experimental = false) {
  return { summary, params, result: v2.v2EmptyResultSchema, paths: {}, experimental } as const;
}

export const APP_SERVER_METHOD_TABLE = {
  'fs/readFile': {
    summary: 'Read a whole file at an absolute path, as base64.',
    params: v2.v2PathParamsSchema,
    result: v2.v2ReadFileResultSchema,
    paths: { path: 'read' },
    operation: { method: 'fs/readFile' },
  },
  'fs/writeFile': {
    summary: 'Write a whole file from base64, atomically.',
    params: v2.v2WriteFileParamsSchema,
    result: v2.v2EmptyResultSchema,
    paths: { path: 'write' },
    operation: { method: 'fs/writeFile' },
  },
  'fs/createDirectory': {
    summary: 'Make a directory (its missing parents too unless `recursive: false`).',
    params: v2.v2CreateDirectoryParamsSchema,
    result: v2.v2EmptyResultSchema,
    paths: { path: 'create' },
    operation: { method: 'fs/createDirectory' },
  },
  'fs/getMetadata': {
    summary: 'Whether a path is a directory, a file or a symlink, and its times.',
    params: v2.v2PathParamsSchema,
    result: v2.v2GetMetadataResultSchema,
    paths: { path: 'read' },
    operation: {
      method: 'fs/getMetadata',
      fromOperation: (r: WireResultOf<'fs/getMetadata'>) => ({
        isDirectory: r.isDirectory,
        isFile: r.isFile,
        isSymlink: r.isSymlink,
        createdAtMs: r.createdAtMs,
        modifiedAtMs: r.modifiedAtMs,
        size: r.size,
      }),
    },
  },
  'fs/readDirectory': {
    summary: "A directory's entries: name, and whether each is a directory or a file.",
    params: v2.v2PathParamsSchema,
    result: v2.v2ReadDirectoryResultSchema,
    paths: { path: 'read' },
    operation: {
      method: 'fs/readDirectory',
      fromOperation: (r: WireResultOf<'fs/readDirectory'>) => ({
        entries: r.entries.map(({ fileName, isDirectory, isFile }) => ({ fileName, isDirectory, isFile })),
      }),
    },
  },
  'fs/remove': {
    summary: 'Remove a file or a tree (`recursive` and `force` default to true).',
    params: v2.v2RemoveParamsSchema,
    result: v2.v2EmptyResultSchema,
    paths: { path: 'remove' },
    operation: { method: 'fs/remove' },
  },
  'fs/copy': {
    summary: 'Copy a file, or a tree with `recursive: true`.',
    params: v2.v2CopyParamsSchema,
    result: v2.v2EmptyResultSchema,
    paths: { sourcePath: 'read', destinationPath: 'write' },
    operation: { method: 'fs/copy' },
  },
  'fs/watch': {
    summary: 'Watch a file or a directory (its direct entries); changes arrive as fs/changed.',
    params: v2.watchParamsSchema,
    result: v2.watchResultSchema,
    paths: { path: 'read' },
    notifications: { 'fs/changed': v2.fsChangedNotificationSchema },
  },
  'fs/unwatch': control('Stop a watch (an unknown id is not an error).', v2.unwatchParamsSchema),
  'process/spawn': {
    summary:
      'Start a process in the sandbox; output and exit arrive as process/outputDelta and process/exited.',
    params: v2.processSpawnParamsSchema,
    result: v2.v2EmptyResultSchema,
    paths: { cwd: 'read' },
    experimental: true,
    notifications: {
      'process/outputDelta': v2.v2ProcessOutputDeltaNotificationSchema,
      'process/exited': v2.v2ProcessExitedNotificationSchema,
    },
  },
  'process/writeStdin': control(
    'Write to a spawned process’s stdin, or close it.',
    v2.processWriteStdinParamsSchema,
    true,
  ),
  'process/kill': control('Kill a spawned process’s whole sandboxed tree.', v2.processKillParamsSchema, true),
  'process/resizePty': control(
    'Resize the terminal of a process spawned with `tty: true`.',
    v2.processResizePtyParamsSchema,
    true,
  ),
  'command/exec': {
    summary:
      'Run a command in the sandbox (narrowed by `sandboxPolicy`/`permissionProfile`); answered when it exits.',
    params: v2.commandExecParamsSchema,
    result: v2.commandExecResultSchema,
    paths: { cwd: 'read' },
    notifications: { 'command/exec/outputDelta': v2.commandExecOutputDeltaNotificationSchema },
  },
  'command/exec/write': control(
    'Write to a running command’s stdin, or close it.',
    v2.commandExecWriteParamsSchema,
  ),
  'command/exec/resize': control(
    'Resize the terminal of a command run with `tty: true`.',
    v2.commandExecResizeParamsSchema,
  ),
  'command/exec/terminate': control(
    'Kill a running command’s whole sandboxed tree.',
    v2.commandExecTerminateParamsSchema,
  ),
} as const satisfies Record<string, AppServerMethodDescriptor>;

type AppTable = typeof APP_SERVER_METHOD_TABLE;
export type AppServerMethod = keyof AppTable;
export type AppParams<M extends AppServerMethod> = z.output<ReturnType<AppTable[M]['params']>>;
export type AppResult<M extends AppServerMethod> = z.output<ReturnType<AppTable[M]['result']>>;
/** Every notification the surface sends, by name, typed from the schemas its methods declare. */
export type AppNotification = NotificationsOf<AppTable>;
/** The file methods: one helper operation each. */
export type AppOperationMethod = {
  [M in AppServerMethod]: AppTable[M] extends { operation: object } ? M : never;
}[AppServerMethod];

export const APP_SERVER_METHODS = Object.keys(APP_SERVER_METHOD_TABLE) as AppServerMethod[];

export function isAppServerMethod(name: string): name is AppServerMethod {
  return Object.hasOwn(APP_SERVER_METHOD_TABLE, name);
}

export function appDescriptorOf(method: AppServerMethod): AppServerMethodDescriptor {
  return APP_SERVER_METHOD_TABLE[method];
}

/**
 * Params of a V2 method, parsed by its schema. A failure is `invalid_request` (-32600) worded as the
 * reference's serde errors are ("Invalid request: missing field `path`"); a request without params
 * is refused the same way ("missing field `params`").
 */
export function parseAppParams<M extends AppServerMethod>(method: M, raw: unknown): AppParams<M> {
  return parseAppValue(APP_SERVER_METHOD_TABLE[method].params(), raw, `${method} params`) as AppParams<M>;
}

/** Any V2 value (the handshake's params too) parsed by its schema, failing as parseAppParams does. */
export function parseAppValue<S extends z.ZodType>(schema: S, raw: unknown, subject: string): z.output<S> {
  if (raw === undefined) throw new FsError('invalid_request', 'Invalid request: missing field `params`');
  assertShallow(raw, 'Invalid request: params', 'invalid_request');
  const result = schema.safeParse(raw, safeParseOptions(subject));
  if (!result.success) {
    const error = issueToFsError(result.error);
    throw new FsError('invalid_request', `Invalid request: ${error.message}`, error.extra);
  }
  return result.data;
}

/**
 * The operation params of a file method: the exec-server's, for the server to add its sandbox to.
 * Every path field becomes a URI; the other fields are the operation's under the same names.
 */
export function operationParamsOf<M extends AppOperationMethod>(
  method: M,
  params: AppParams<M>,
  os: HostOs,
): Omit<ParamsIn<AppTable[M]['operation']['method']>, 'sandbox'> {
  const converted: Record<string, unknown> = { ...params };
  for (const field of Object.keys(APP_SERVER_METHOD_TABLE[method].paths))
    converted[field] = nativeToPathUri(converted[field] as string, os);
  return converted as Omit<ParamsIn<AppTable[M]['operation']['method']>, 'sandbox'>;
}

/** A file method's V2 result from its operation's result. */
export function appResultOf<M extends AppOperationMethod>(method: M, result: unknown): AppResult<M> {
  const operation: AppServerMethodDescriptor['operation'] = APP_SERVER_METHOD_TABLE[method].operation;
  return (
    operation?.fromOperation ? (operation.fromOperation as (r: unknown) => unknown)(result) : result
  ) as AppResult<M>;
}
