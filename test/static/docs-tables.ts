import {
  descriptorOf,
  ERROR_KINDS,
  type ErrorKind,
  FsError,
  LIMITS,
  METHODS,
  PATH_URI_MAX_CHARS,
} from '@fs-sandbox/policy';
import { isOptional, shapeOf } from '../../packages/policy/test/support/schema-shape.js';

/**
 * The tables the docs show that the code already says: the method table, the limits and the error
 * kinds. Each is rendered here from its source and kept between two marker comments in its page;
 * `docs-tables.test.ts` fails when a page differs, and `UPDATE_DOCS=1` rewrites the block.
 */

export interface GeneratedBlock {
  /** The page, relative to the repository. */
  file: string;
  /** The marker comments' name: `<!-- NAME: generated from SOURCE -->` … `<!-- end of NAME -->`. */
  name: string;
  source: string;
  /** The rows between the markers. */
  render: () => string;
}

const ACCESS_WORD = { read: 'reads', write: 'writes', create: 'creates', remove: 'removes' } as const;

/** Every exposed method: params, result, who answers it, its path params, what it does. */
function methodTable(): string {
  const rows = METHODS.filter((method) => descriptorOf(method).exposed).map((method) => {
    const descriptor = descriptorOf(method);
    const params = Object.entries(shapeOf(descriptor.params()))
      .map(([key, schema]) => `${key}${isOptional(schema) ? '?' : ''}`)
      .join(', ');
    const result = `{${Object.keys(shapeOf(descriptor.result())).join(', ')}}`;
    const paths = Object.entries(descriptor.paths)
      .map(([field, access]) => `${ACCESS_WORD[access]} \`${field}\``)
      .join(', ');
    const where = descriptor.answeredBy === 'helper' ? 'helper' : 'server';
    return `| \`${method}\` | \`${params}\` | \`${result}\` | ${where} | ${paths || '—'} | ${descriptor.summary} |`;
  });
  return [
    '| method | params | result | answered by | paths | what it does |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

type Limits = typeof LIMITS;

/** 50000 → "50 000" (a space between groups of three, as the docs write numbers). */
export function count(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+$)/g, ' ');
}

/** A byte size in the largest binary unit that divides it: 524288 → "512 KiB"; else bytes. */
export function bytes(value: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (value >= size && value % size === 0) return `${count(value / size)} ${unit}`;
  }
  return `${count(value)} bytes`;
}

/** A duration in the largest unit that divides it: 60000 → "60 s". */
export function duration(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0 && !(unit === 'min' && ms < 600_000))
      return `${count(ms / size)} ${unit}`;
  }
  return `${count(ms)} ms`;
}

/**
 * One row per bounded thing, its value written from `LIMITS`. Every key of `LIMITS` must be read by
 * some row (the test records the reads), so a new limit cannot go undocumented and no value can
 * drift from the code.
 */
export const LIMIT_ROWS: readonly [string, (limits: Limits) => string][] = [
  [
    '`fs/readFile`',
    (l) =>
      `${bytes(l.readFileMaxBytes)} (\`file_too_large\` past it; a sparse 100 GiB file is refused at once)`,
  ],
  [
    '`fs/writeFile`',
    (l) =>
      `bounded by the server's message size: ${bytes(l.rpcMaxMessageBytes)} of JSON by default (\`--max-message-bytes\`); larger files through a write handle`,
  ],
  ['`fs/readBlock` length', (l) => `${l.readBlockMinLen} .. ${count(l.readBlockMaxLen)} bytes`],
  ['`fs/writeBlock` chunk', (l) => `${l.writeBlockMinLen} .. ${count(l.writeBlockMaxLen)} bytes (decoded)`],
  [
    'a file written through a write handle',
    (l) => `${bytes(l.writeHandleMaxBytes)}: no block may end past it (\`file_too_large\`)`,
  ],
  [
    '`fs/readTextFile`, `fs/edit` text',
    (l) =>
      `\`fs/edit\`: ${bytes(l.textMaxBytes)} of file (\`file_too_large\`, naming the cap; also an edit's result). \`fs/readTextFile\` decodes files up to ${bytes(l.textMaxBytes)} whole and streams a window (\`head\`, \`tail\`, \`line\`/\`limit\`) of larger ones (any size, bounded memory, no \`sha256\`); a whole read of a larger one is \`file_too_large\`; \`content\` is at most ${bytes(l.textMaxBytes)} (\`maxBytes\`, default ${bytes(l.textMaxBytes)})`,
  ],
  [
    '`fs/edit` edits',
    (l) =>
      `1 .. ${l.editMaxEdits} edits per request, each \`oldText\` and \`newText\` at most ${bytes(l.editMaxTextBytes)} of UTF-8 (\`invalid_params\`)`,
  ],
  [
    'read and write handles per connection',
    (l) => `${l.maxOpenHandlesPerConnection}; handle id 1..${l.handleIdMaxBytes} bytes`,
  ],
  ['`fs/readDirectory`', (l) => `${count(l.readDirectoryMaxEntries)} entries (\`truncated: true\`)`],
  [
    '`fs/walk`',
    (l) =>
      `depth ${l.walkMaxDepth}, ${count(l.walkMaxDirectories)} directories, ${count(l.walkMaxEntries)} entries, ${bytes(l.walkMaxResponseBytes)} response (\`truncated: true\`)`,
  ],
  [
    '`fs/search`',
    (l) =>
      `\`maxResults\` ${count(l.searchDefaultResults)} by default, at most ${count(l.searchMaxResults)}; \`contextLines\` 0..${l.searchMaxContextLines}; lines cut at ${l.searchMaxLineChars} characters; ${bytes(l.searchMaxResponseBytes)} response; one ripgrep output line of ${bytes(l.searchMaxOutputLineBytes)}; ${duration(l.searchMaxRunMs)} of ripgrep (\`truncated: true\`)`,
  ],
  [
    '`fs/glob`',
    (l) =>
      `\`maxResults\` ${count(l.globDefaultResults)} by default, at most ${count(l.globMaxResults)}; ${count(l.searchMaxFiles)} files listed; ${bytes(l.searchMaxResponseBytes)} response; ${duration(l.searchMaxRunMs)} (\`truncated: true\`)`,
  ],
  [
    'recursive `fs/remove` / `fs/copy`, `fs/rename` of a directory',
    (l) => `${count(l.treeMaxEntries)} entries, refused before anything is touched`,
  ],
  [
    '`fs/applyPatch`',
    (l) =>
      `${bytes(l.patchMaxBytes)} of patch text (\`file_too_large\`), ${l.patchMaxFiles} files and ${count(l.patchMaxChunks)} update chunks per patch (\`invalid_params\`); each file's text is a text method's (${bytes(l.textMaxBytes)})`,
  ],
  [
    '`fs/batch`',
    (l) =>
      `${l.batchMaxOperations} operations (\`invalid_params\` past it); ${bytes(l.batchMaxReplyBytes)} of result JSON together (later results \`file_too_large\`); one helper run time for the whole batch`,
  ],
  [
    '`fs/copy` bytes written',
    (l) =>
      `${bytes(l.copyMaxBytes)} of data (a sparse file counts its data, not its holes, and its copy keeps the holes); refused before anything is copied (\`file_too_large\`)`,
  ],
  [
    'one JSON-RPC message',
    (l) => `${bytes(l.rpcMaxMessageBytes)} (oversized → \`invalid_request\`, the connection survives)`,
  ],
  [
    'one path',
    (l) =>
      `${count(l.pathMaxBytes)} bytes once decoded, Linux's \`PATH_MAX\`, on every OS (a path URI of more than ${count(PATH_URI_MAX_CHARS)} characters is refused before it is decoded); also each path of a patch (\`invalid_params\`)`,
  ],
  [
    'sandbox policy',
    (l) =>
      `${l.policyMaxEntries} \`file_system.entries\` (\`invalid_params\`): building a sandbox weighs every path it mounts or masks against every entry`,
  ],
  [
    'params nesting',
    (l) =>
      `${l.paramsMaxDepth} levels of arrays and objects, checked before any schema walks them (\`invalid_params\`)`,
  ],
  [
    'finished replies not yet read',
    (l) =>
      `${bytes(l.replyMaxUnsentBytesPerConnection)} per connection, ${bytes(l.replyMaxUnsentBytesTotal)} per server (\`--max-unsent-bytes\`, \`--max-unsent-bytes-total\`): further requests wait to start; a connection holding nothing may always run one`,
  ],
  [
    'helper stdin / stdout / stderr',
    (l) =>
      `${bytes(l.helperMaxRequestBytes)} of request / ${bytes(l.helperMaxReplyBytes)} of reply / ${bytes(l.helperMaxStderrBytes)} kept for messages`,
  ],
  [
    'helper run time',
    (l) =>
      `${duration(l.helperTimeoutMs)} by default (\`--timeout\`; ${duration(l.mcpHelperTimeoutMs)} for \`mcp\`, the reference's per-call bound), then the whole process tree is killed (\`timeout\`); a write's temporary file is then removed by a clean-up helper under the same sandbox (temp names carry a random per-request tag)`,
  ],
  [
    'deny-glob scan (Linux)',
    (l) =>
      `${count(l.denyGlobScanMaxEntries)} entries, ${l.denyGlobScanMaxDepth} levels below a \`**\` pattern's literal prefix; a scan that cannot see every match refuses the sandbox (\`sandbox_unavailable\`)`,
  ],
  [
    'hard links to denied files',
    (l) =>
      `${count(l.deniedIdentityScanEntries)} entries looked at below denied directories per request to learn the identities of files with other names`,
  ],
  [
    "a command's executable-surface scan",
    (l) =>
      `${count(l.commandSurfaceScanEntries)} entries walked below the writable roots before and after each command, ${l.commandSurfaceRepositories} git directories; past either the command is refused (\`sandbox_unavailable\`)`,
  ],
  [
    'commands (`process/*`)',
    (l) =>
      `${l.processesPerConnection} live processes per connection; id ${l.processIdMaxBytes} bytes; ${count(l.processMaxArgs)} argv entries; \`timeoutMs\` at most ${duration(l.processMaxTimeoutMs)}; one \`process/read\` waits at most ${duration(l.processReadMaxWaitMs)}`,
  ],
  [
    'command output and input',
    (l) =>
      `${bytes(l.processRetainedOutputBytes)} kept per process for \`process/read\`; ${bytes(l.processUnsentOutputBytes)} of unsent output notifications per connection (past it the server stops reading the commands' pipes); ${bytes(l.processStdinBufferBytes)} of pending stdin per process; ${bytes(l.commandRunOutputBytes)} of output collected by a library \`broker.run\` (its \`outputBytesCap\` at most)`,
  ],
  [
    'app-server commands (`process/spawn`, `command/exec`)',
    (l) =>
      `${bytes(l.v2DefaultOutputBytesCap)} of output kept per stream and ${duration(l.v2DefaultTimeoutMs)} of run time when the request names none; output may drain for ${duration(l.v2OutputDrainMs)} after the process exited`,
  ],
  [
    'app-server watches (`fs/watch`)',
    (l) =>
      `${l.watchesPerConnection} watches per connection; ${count(l.watchPendingPaths)} changed paths held per watch between two \`fs/changed\` (past it they collapse into the watched path)`,
  ],
  [
    "a command's network allowlist",
    (l) =>
      `${l.networkMaxEntries} entries in \`allow\` and in \`deny\`, ${l.networkEntryMaxChars} characters each (\`invalid_params\`); \`managedNetwork.loopbackPorts\` at most ${l.networkMaxManagedPorts} ports; \`unix_sockets\` (\`--allow-unix-socket\`) at most ${l.unixSocketMaxEntries} sockets`,
  ],
  [
    "a command's proxy",
    (l) =>
      `${l.networkMaxConnections} connections open at once; ${bytes(l.networkMaxBytes)} relayed over the command's life (then every connection closes); ${duration(l.networkIdleTimeoutMs)} without a byte either way; ${duration(l.networkRequestTimeoutMs)} to send a request; ${duration(l.networkConnectTimeoutMs)} to resolve and to connect; ${l.networkMaxLookups} look-ups at once; ${count(l.networkMaxRefusalEvents)} refusals reported (then one line says the rest were not); ${duration(l.networkSetupTimeoutMs)} for the set-up step to hand over its listeners — past each, refused or closed, and said`,
  ],
];

/** The `LIMITS` keys a render reads. */
export function limitKeysRead(render: (limits: Limits) => string): Set<string> {
  const read = new Set<string>();
  const spy = new Proxy(LIMITS, {
    get(target, key, receiver) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key, receiver);
    },
  });
  render(spy);
  return read;
}

function limitsTable(): string {
  return [
    '| limit | value |',
    '|---|---|',
    ...LIMIT_ROWS.map(([what, value]) => `| ${what} | ${value(LIMITS)} |`),
  ].join('\n');
}

/**
 * What each error kind means to a client. Typed by `ErrorKind`, so a new kind does not compile until
 * it is described here; its code comes from the error type itself.
 */
export const ERROR_KIND_MEANINGS: Record<ErrorKind, string> = {
  not_found:
    'the path does not exist in the sandbox (a link leading outside the roots finds nothing there); also an unknown program (`data.kind: "spawnNotFound"`)',
  permission_denied:
    'the policy refuses it: outside the readable or writable roots, denied by an entry or a glob; or no platform sandbox where `--require-sandbox` asks for one',
  invalid_request:
    'the request cannot be carried out as asked: a message or tree over its bound, a rename onto itself or into its own subtree',
  invalid_params:
    "params that fail the method's schema: a missing, misspelled or unknown field (its dotted path in `data.field`, the closest known name in the message), a bad glob or regex, a count over its bound",
  file_too_large: 'a file, text, patch or result over its size limit (see above)',
  not_regular_file: 'a FIFO, socket, device or other special file where a regular file is needed',
  is_directory: 'a directory where a file is needed (or a non-empty directory removed without `recursive`)',
  not_directory: 'a file where a directory is needed',
  already_exists:
    'a name exists where the operation would make one: `fs/rename` onto an existing name without `overwrite`, a file where `fs/createDirectory` or a tree copy needs a directory',
  file_already_exists: '`fs/writeFile` with `mode: "create"` on a file that exists',
  hash_mismatch: 'the file is not the version `expectedSha256` names, or changed since it was read',
  text_not_found:
    "`fs/edit`'s `oldText` does not occur (`data.editIndex`; `data.closestLine`, the most similar line)",
  ambiguous_text_match:
    "`fs/edit`'s `oldText` occurs more than once without `replaceAll` (`data.editIndex`, `data.count`, `data.lines`)",
  binary_file: '`fs/readTextFile` or `fs/edit` on a file that is not UTF-8 or BOM-marked UTF-16 text',
  no_change: "`fs/edit`'s edits leave the file as it was; nothing is written",
  symlink_escape: 'a sandboxed write would follow a symlink at the name it changes',
  protected_path:
    "a write under `.git`, `.agents` or `.codex` of a writable root, a `.git` pointer's target or fs-sandbox's own code",
  patch_parse_error: "`fs/applyPatch`: the reference's parse message, with the line in `data.line`",
  patch_rejected: '`fs/applyPatch`: the safety assessment refused the patch (`data.reason`)',
  patch_conflict:
    '`fs/applyPatch`: "Failed to find expected lines …", with `data.path` and the 1-based `data.chunk`',
  untrusted_workspace:
    'a write-class method or a command on an untrusted broker (`--untrusted`, `trusted: false`)',
  sandbox_unavailable:
    'no platform sandbox can run the request as asked (bwrap missing or unusable, a deny-glob scan that cannot see every match, a policy this OS cannot enforce); nothing ran',
  helper_failed:
    "the helper ended without a valid reply (it crashed or was killed), or found its sandbox view stale after the broker's one retry",
  timeout: 'the helper ran past its time and its whole process tree was killed',
  io_error:
    'the OS refused the operation for another reason: a full disk, too many open files, a failed block of a write handle',
  connection_lost: "the remote client's connection ended (every waiting and later call gets it)",
  internal_error: 'a bug on our side, with its message (never a stack trace)',
};

function errorKindsTable(): string {
  return [
    '| `data.errorKind` | code | meaning |',
    '|---|---|---|',
    ...ERROR_KINDS.map(
      (kind) => `| \`${kind}\` | ${new FsError(kind, '').code} | ${ERROR_KIND_MEANINGS[kind]} |`,
    ),
  ].join('\n');
}

export const GENERATED_BLOCKS: readonly GeneratedBlock[] = [
  {
    file: 'docs/protocols/exec-server.md',
    name: 'method table',
    source: 'packages/policy/src/method-table.ts',
    render: methodTable,
  },
  {
    file: 'docs/limits.md',
    name: 'limits table',
    source: 'packages/policy/src/limits.ts',
    render: limitsTable,
  },
  {
    file: 'docs/limits.md',
    name: 'error kinds table',
    source: 'packages/policy/src/error-kinds.ts',
    render: errorKindsTable,
  },
];

/** The block as it stands in its page, markers included. */
export function blockText(block: GeneratedBlock): string {
  return [
    `<!-- ${block.name}: generated from ${block.source} -->`,
    block.render(),
    `<!-- end of ${block.name} -->`,
  ].join('\n');
}
