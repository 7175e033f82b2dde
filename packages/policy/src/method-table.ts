import type { z } from 'zod';
import { decodedBase64Length } from './base64.js';
import type { HostOs } from './host-os.js';
import type { PatchPolicyScope } from './patch/assess-patch.js';
import { parseBoundedPatch } from './patch/patch-bounds.js';
import { admitPatch, patchTouchedPaths } from './patch/patch-request.js';
import {
  assertHandleIdLength,
  assertReadBlockLength,
  assertWalkLimits,
  assertWriteBlock,
} from './request-bounds.js';
import * as params from './schemas/fs-params.js';
import * as results from './schemas/fs-results.js';
import type { LazySchema } from './schemas/lazy-schema.js';
import * as processParams from './schemas/process-params.js';
import * as processResults from './schemas/process-results.js';
import { assertEditBounds, assertTextWindow } from './text-bounds.js';
import type { PathAccess, TouchedPath } from './touched-path.js';

/**
 * The method table: every method fs-sandbox knows, as one descriptor each. Its params and result
 * schemas are the single source of the method's types; the rest says how the method is served:
 *
 * - `answeredBy`: `helper` methods run as one helper operation each (in-process or sandboxed, as
 *   the context decides); `server` methods are answered by the JSON-RPC server itself (the
 *   handshake and the read handles, which hold state across requests).
 * - `exposed`: on the JSON-RPC wire and in `fs-sandbox call`. The others are operations the broker
 *   runs for its own purposes (the read handles' block reads, the clean-up after a killed helper).
 * - `paths`: every path param with the access it needs. The pre-check, the conversion to native
 *   paths, the audit log and the temp-file clean-up all read this; a path param missing here would
 *   reach no check, so parsing a method whose schema has one unlisted fails its table test.
 * - `binary`: the params field whose bytes travel beside the JSON to the helper, and the result
 *   field that holds file bytes (a Buffer in the library, base64 on the wire).
 * - `orderedBy`: requests naming the same value of this field run in arrival order on a connection.
 * - `checkBounds`: limits checked after the params parsed; they fail as invalid *request* (-32600)
 *   with fixed texts, as the reference's do.
 * - `contextCwd`: a path param that defaults to the sandbox context's cwd.
 * - `innerPaths`: paths a param carries inside its value (a patch's files), as touched paths of the
 *   converted params; the pre-check and the temp clean-up read them beside `paths`.
 * - `admit`: a decision before any helper runs (the patch safety assessment): null to go ahead, or
 *   the result to answer instead; a refusal throws.
 * - `writesTree`: the `write` path may receive a whole tree, so a killed helper's temporary files
 *   are looked for below it too.
 * - `runsRipgrep`: the helper runs ripgrep for it, so the request carries ripgrep's path and the
 *   sandbox binds that binary.
 * - `innerRequests`: the requests a request carries inside it (fs/batch's operations), from its
 *   helper params, each as it would be sent alone. The trust gate, the temp clean-up and the
 *   ripgrep binding judge a batch by them; the broker runs such a method through its batch plan.
 * - `notifications`: the notifications a request of the method makes the server send afterwards,
 *   by name, with their params' schemas. The server builds them as `NotificationsOf` types them
 *   and clients parse them with the same schemas (`notificationSchemasOf`).
 *
 * Adding a method is one entry here, one operation module (helper `ops/` or a server handler), and
 * its tests; the compiler then asks for whatever else is missing.
 */

export type { PathAccess } from './touched-path.js';

export interface MethodDescriptor {
  readonly summary: string;
  readonly params: LazySchema;
  readonly result: LazySchema;
  readonly answeredBy: 'helper' | 'server';
  readonly exposed: boolean;
  readonly paths: Readonly<Record<string, PathAccess>>;
  readonly binary?: { readonly params?: string; readonly result?: string };
  readonly orderedBy?: string;
  readonly checkBounds?: (parsed: never) => void;
  readonly contextCwd?: string;
  readonly innerPaths?: (params: never, os: HostOs) => TouchedPath[];
  readonly admit?: (params: never, scope: PatchPolicyScope, os: HostOs) => unknown;
  /** The `write` path may receive a whole tree (a move across file systems copies one there). */
  readonly writesTree?: boolean;
  readonly runsRipgrep?: boolean;
  readonly innerRequests?: (helperParams: never) => readonly InnerRequest[];
  readonly notifications?: NotificationSchemas;
}

/** A method's notifications: each name with the schema of its params. */
export type NotificationSchemas = Readonly<Record<string, LazySchema>>;

/** The notification schemas of a table's methods, one union member per method that has some. */
type NotificationMapsOf<T> = {
  [M in keyof T]: T[M] extends { readonly notifications: infer S } ? S : never;
}[keyof T];

/**
 * Every notification a method table's methods send, by name, with its params as the schema
 * outputs them: what a server builds and a client receives. Derived, so a notification declared
 * on a method is typed wherever it is sent.
 */
export type NotificationsOf<T> = {
  [N in NotificationMapsOf<T> extends infer S ? (S extends unknown ? keyof S & string : never) : never]: (
    NotificationMapsOf<T> extends infer S
      ? S extends { readonly [K in N]: infer Z }
        ? Z
        : never
      : never
  ) extends infer Z extends LazySchema
    ? z.output<ReturnType<Z>>
    : never;
};

/** A table's notifications by name with their schemas, built on first use (a name two methods send is one entry). */
export function notificationSchemasOf(
  table: Readonly<Record<string, { readonly summary: string; readonly notifications?: NotificationSchemas }>>,
): ReadonlyMap<string, LazySchema> {
  const schemas = new Map<string, LazySchema>();
  for (const descriptor of Object.values(table))
    for (const [name, schema] of Object.entries(descriptor.notifications ?? {})) schemas.set(name, schema);
  return schemas;
}

/** One request carried inside another (an operation of fs/batch): a method name and its params. */
export interface InnerRequest {
  readonly method: string;
  readonly params: unknown;
}

/** What a table entry's params schema outputs (its `checkBounds` reads that). */
type Parsed<S extends LazySchema> = z.output<ReturnType<S>>;

export const METHOD_TABLE = {
  initialize: {
    summary: 'Start a connection (once, before anything else; then send `initialized`).',
    params: params.initializeParamsSchema,
    result: results.initializeResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
  },
  'fs/readFile': {
    summary: 'Read a whole regular file (at most 512 MiB; larger files through fs/open).',
    params: params.readFileParamsSchema,
    result: results.readFileResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
    binary: { result: 'dataBase64' },
  },
  'fs/writeFile': {
    summary: 'Write a whole file atomically; `mode: "create"` and `expectedSha256` guard it.',
    params: params.writeFileParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'write' },
    binary: { params: 'dataBase64' },
  },
  'fs/readTextFile': {
    summary: 'Read a text file (UTF-8/16) by lines, with its encoding, line endings and sha256.',
    params: params.readTextFileParamsSchema,
    result: results.readTextFileResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
    checkBounds: (parsed: Parsed<typeof params.readTextFileParamsSchema>) => assertTextWindow(parsed),
  },
  'fs/edit': {
    summary: 'Replace texts in a text file atomically, all or nothing; returns a unified diff.',
    params: params.editParamsSchema,
    result: results.editResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'write' },
    checkBounds: (parsed: Parsed<typeof params.editParamsSchema>) => assertEditBounds(parsed),
  },
  'fs/createDirectory': {
    summary: 'Make a directory (and its missing parents unless `recursive: false`).',
    params: params.createDirectoryParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'create' },
  },
  'fs/getMetadata': {
    summary: 'Kind, size and times of a path (follows a final symlink, reports that it was one).',
    params: params.getMetadataParamsSchema,
    result: results.getMetadataResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
  },
  'fs/canonicalize': {
    summary: 'The real path of an existing path (symlinks resolved).',
    params: params.canonicalizeParamsSchema,
    result: results.canonicalizeResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
  },
  'fs/readDirectory': {
    summary: 'The entries of a directory, sorted by name.',
    params: params.readDirectoryParamsSchema,
    result: results.readDirectoryResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
  },
  'fs/remove': {
    summary: 'Remove a file, or a tree with `recursive` (refused whole if any part may not go).',
    params: params.removeParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'remove' },
  },
  'fs/copy': {
    summary: 'Copy a file, or a tree with `recursive`, to a new or replaced destination.',
    params: params.copyParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { sourcePath: 'read', destinationPath: 'write' },
  },
  'fs/walk': {
    summary: 'List a tree breadth-first within depth, directory and entry limits.',
    params: params.walkParamsSchema,
    result: results.walkResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
    checkBounds: (parsed: Parsed<typeof params.walkParamsSchema>) => assertWalkLimits(parsed.options),
  },
  'fs/search': {
    summary: 'Search file contents with ripgrep inside the sandbox (ignore files honoured, bounded).',
    params: params.searchParamsSchema,
    result: results.searchResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
    runsRipgrep: true,
  },
  'fs/glob': {
    summary: 'Files matching globs (ripgrep inside the sandbox), newest first.',
    params: params.globParamsSchema,
    result: results.globResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { path: 'read' },
    runsRipgrep: true,
  },
  'fs/open': {
    summary:
      'Open a read handle on a regular file, or with `mode: "replace"` a write handle whose blocks replace the file atomically on fs/close.',
    params: params.openParamsSchema,
    result: results.openResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: { path: 'read' },
    orderedBy: 'handleId',
    checkBounds: (parsed: Parsed<typeof params.openParamsSchema>) => assertHandleIdLength(parsed.handleId),
  },
  'fs/readBlock': {
    summary: 'Read one block of an open handle (each block is one sandboxed read).',
    params: params.readBlockParamsSchema,
    result: results.readBlockResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
    binary: { result: 'chunk' },
    orderedBy: 'handleId',
    checkBounds: (parsed: Parsed<typeof params.readBlockParamsSchema>) => {
      assertHandleIdLength(parsed.handleId);
      assertReadBlockLength(parsed.len);
    },
  },
  'fs/writeBlock': {
    summary: 'Write one block of a write handle at its offset (each block is one sandboxed write).',
    params: params.writeBlockParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
    binary: { params: 'chunk' },
    orderedBy: 'handleId',
    checkBounds: (parsed: Parsed<typeof params.writeBlockParamsSchema>) => {
      assertHandleIdLength(parsed.handleId);
      assertWriteBlock(parsed.offset, decodedBase64Length(parsed.chunk));
    },
  },
  'fs/close': {
    summary:
      'Close a handle: a write handle publishes what was written, atomically (closing an unknown one succeeds).',
    params: params.closeParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
    orderedBy: 'handleId',
    checkBounds: (parsed: Parsed<typeof params.closeParamsSchema>) => assertHandleIdLength(parsed.handleId),
  },
  'fs/rename': {
    summary: 'Move a file, link or tree to a new name (refused whole if any part may not move).',
    params: params.renameParamsSchema,
    result: results.renameResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { sourcePath: 'remove', destinationPath: 'write' },
    writesTree: true,
  },
  'fs/batch': {
    summary: 'Up to 256 helper operations under one sandbox and one helper, each answered on its own.',
    params: params.batchParamsSchema,
    result: results.batchResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: {},
    innerRequests: (helperParams: { operations: readonly InnerRequest[] }) => helperParams.operations,
  },
  'fs/explainAccess': {
    summary: 'The access the sandbox gives a path, and the rule that decided (no helper runs).',
    params: params.explainAccessParamsSchema,
    result: results.explainAccessResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: { path: 'read' },
  },
  'fs/openForRead': {
    summary: 'Check a readable regular file and report its identity (behind fs/open).',
    params: params.openForReadParamsSchema,
    result: results.openForReadResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'read' },
  },
  'fs/readRange': {
    summary: 'One positional read, refused if the file is no longer the one opened (behind fs/readBlock).',
    params: params.readRangeParamsSchema,
    result: results.readRangeResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'read' },
    binary: { result: 'chunk' },
    checkBounds: (parsed: Parsed<typeof params.readRangeParamsSchema>) => assertReadBlockLength(parsed.len),
  },
  'fs/stageWrite': {
    summary: 'Check a file may be written and make the staging file beside it (behind a write handle).',
    params: params.stageWriteParamsSchema,
    result: results.stageWriteResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'write' },
  },
  'fs/writeRange': {
    summary: "One positional write into a write handle's staging file (behind fs/writeBlock).",
    params: params.writeRangeParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'write' },
    binary: { params: 'chunk' },
    checkBounds: (parsed: Parsed<typeof params.writeRangeParamsSchema>) =>
      assertWriteBlock(parsed.offset, decodedBase64Length(parsed.chunk)),
  },
  'fs/publishStaged': {
    summary: "Replace the file with its write handle's staging file, atomically (behind fs/close).",
    params: params.stagedFileParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'write' },
  },
  'fs/discardStaged': {
    summary: "Remove an abandoned write handle's staging file (its connection closed, a block failed).",
    params: params.stagedFileParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'write' },
  },
  'fs/removeTemps': {
    summary: 'Remove the temporary files a killed helper left (only names with its tag).',
    params: params.removeTempsParamsSchema,
    result: results.emptyResultSchema,
    answeredBy: 'helper',
    exposed: false,
    paths: { path: 'remove' },
  },
  'environment/info': {
    summary: 'What `initialize` reports as `environmentInfo` (shell, cwd, home, OS, capabilities).',
    params: processParams.environmentParamsSchema,
    result: () => results.initializeResultSchema().shape.environmentInfo,
    answeredBy: 'server',
    exposed: true,
    paths: {},
  },
  'environment/status': {
    summary: 'Whether the environment takes requests (always `ready` once connected).',
    params: processParams.environmentParamsSchema,
    result: processResults.environmentStatusResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
  },
  'process/start': {
    summary: 'Run a command in the sandbox of `sandbox`; output and exit arrive as notifications.',
    params: processParams.processStartParamsSchema,
    result: processResults.processStartResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: { cwd: 'read' },
    notifications: {
      'process/output': processResults.processOutputNotificationSchema,
      'process/exited': processResults.processExitedNotificationSchema,
      'process/closed': processResults.processClosedNotificationSchema,
    },
  },
  'process/read': {
    summary: "A command's retained output after `afterSeq`, and whether it exited.",
    params: processParams.processReadParamsSchema,
    result: processResults.processReadResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
  },
  'process/write': {
    summary:
      "Write bytes to a command's stdin (started with `pipeStdin: true`) or its terminal (`tty: true`).",
    params: processParams.processWriteParamsSchema,
    result: processResults.processWriteResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
    orderedBy: 'processId',
  },
  'process/signal': {
    summary: 'Interrupt a command (ends it: the sandbox does not forward signals).',
    params: processParams.processSignalParamsSchema,
    result: processResults.processSignalResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
  },
  'process/terminate': {
    summary: "Kill a command's whole process tree; `running` says whether it was still running.",
    params: processParams.processTerminateParamsSchema,
    result: processResults.processTerminateResultSchema,
    answeredBy: 'server',
    exposed: true,
    paths: {},
  },
  'fs/applyPatch': {
    summary: 'Apply a Codex-format patch (add, delete, update, move) under cwd, after its safety assessment.',
    params: params.applyPatchParamsSchema,
    result: results.applyPatchResultSchema,
    answeredBy: 'helper',
    exposed: true,
    paths: { cwd: 'read' },
    contextCwd: 'cwd',
    innerPaths: patchTouchedPaths,
    admit: admitPatch,
    checkBounds: (parsed: Parsed<typeof params.applyPatchParamsSchema>) => {
      parseBoundedPatch(parsed.patch);
    },
  },
} as const satisfies Record<string, MethodDescriptor>;

type Table = typeof METHOD_TABLE;

export type Method = keyof Table;
/** Methods one helper operation performs. */
export type HelperMethod = { [M in Method]: Table[M]['answeredBy'] extends 'helper' ? M : never }[Method];
/** Methods the JSON-RPC server answers itself. */
export type ServerMethod = Exclude<Method, HelperMethod>;
/** Methods a client may send (JSON-RPC, `fs-sandbox call`). */
export type ExposedMethod = { [M in Method]: Table[M]['exposed'] extends true ? M : never }[Method];

/** The exec-server's notifications (process/start's output, exit and close), typed from their schemas. */
export type ExecServerNotification = NotificationsOf<Table>;

/** Params as a caller writes them (path URIs as strings, base64 as a string). */
export type ParamsIn<M extends Method> = z.input<ReturnType<Table[M]['params']>>;
/** Params as parsed: defaults applied, path params taken apart (`ParsedPathUri`). */
export type ParsedParams<M extends Method> = z.output<ReturnType<Table[M]['params']>>;
/** The result as the JSON-RPC wire carries it (file bytes as base64). */
export type WireResultOf<M extends Method> = z.output<ReturnType<Table[M]['result']>>;

export type PathFieldOf<M extends Method> = keyof Table[M]['paths'] & string;
type BinaryOf<M extends Method, Side extends 'params' | 'result'> = Table[M] extends {
  binary: { [S in Side]: infer Field };
}
  ? Field
  : never;
export type BinaryParamsFieldOf<M extends Method> = BinaryOf<M, 'params'>;
export type BinaryResultFieldOf<M extends Method> = BinaryOf<M, 'result'>;

/**
 * The result as the library returns it: file bytes as a Buffer (the base64 of a 512 MiB file does
 * not fit in a JavaScript string; the server encodes them when it replies).
 */
export type ResultOf<M extends Method> = {
  [K in keyof WireResultOf<M>]: K extends BinaryResultFieldOf<M> ? Buffer : WireResultOf<M>[K];
};

/**
 * What the helper receives: the parsed params with every path param a native absolute path and the
 * binary param as bytes. The sandbox context stays with the broker: the helper is told only whether
 * it runs sandboxed and the path guard that holds there.
 */
export type HelperParamsOf<M extends HelperMethod> = {
  [K in Exclude<keyof ParsedParams<M>, 'sandbox'>]: K extends PathFieldOf<M>
    ? string
    : K extends BinaryParamsFieldOf<M>
      ? Uint8Array
      : ParsedParams<M>[K];
};
export type HelperResultOf<M extends HelperMethod> = WireResultOf<M>;
/** One operation's answer in an fs/batch result: its result (wire form) or its wire error. */
export type BatchOutcome = WireResultOf<'fs/batch'>['results'][number];

export function isMethod(name: string): name is Method {
  return Object.hasOwn(METHOD_TABLE, name);
}

export function descriptorOf(method: Method): MethodDescriptor {
  return METHOD_TABLE[method];
}

export function isHelperMethod(name: string): name is HelperMethod {
  return isMethod(name) && METHOD_TABLE[name].answeredBy === 'helper';
}

export function isExposedMethod(name: string): name is ExposedMethod {
  return isMethod(name) && METHOD_TABLE[name].exposed;
}

/**
 * Whether a method changes the file system: any path it creates, replaces or removes. An untrusted
 * broker refuses these (fs/batch is judged by its operations, see the broker's trust gate). Paths
 * carried inside a param's value (a patch's files) are what such a method writes; its own path
 * params may all be reads (fs/applyPatch's `cwd`), so they count as writes here.
 */
export function isWriteClassMethod(method: Method): boolean {
  const descriptor: MethodDescriptor = descriptorOf(method);
  return (
    descriptor.innerPaths !== undefined || Object.values(descriptor.paths).some((access) => access !== 'read')
  );
}

/** Whether a method carries other requests inside it (fs/batch), see `innerRequests`. */
export function carriesRequests(method: Method): boolean {
  return descriptorOf(method).innerRequests !== undefined;
}

/** The requests `helperParams` of `method` carry inside them; none for a method that carries none. */
export function innerRequestsOf(method: Method, helperParams: unknown): readonly InnerRequest[] {
  const inner = descriptorOf(method).innerRequests as
    | ((params: unknown) => readonly InnerRequest[])
    | undefined;
  return inner === undefined ? [] : inner(helperParams);
}

/** Whether a request of `method` with these helper params runs ripgrep: itself, or a request it carries. */
export function requestRunsRipgrep(method: Method, helperParams: unknown): boolean {
  return (
    descriptorOf(method).runsRipgrep === true ||
    innerRequestsOf(method, helperParams).some(
      (inner) => isMethod(inner.method) && descriptorOf(inner.method).runsRipgrep === true,
    )
  );
}

/** Every method, in table order (help texts, the docs' table). */
export const METHODS = Object.keys(METHOD_TABLE) as Method[];
