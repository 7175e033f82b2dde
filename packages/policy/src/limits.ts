/** Limits. Every size, count and duration the project bounds is named here. */
export const LIMITS = {
  /** fs/readFile refuses files larger than this. */
  readFileMaxBytes: 512 * 1024 * 1024,
  /** fs/readBlock `len` range. */
  readBlockMinLen: 1,
  readBlockMaxLen: 1024 * 1024,
  /** fs/writeBlock chunk size range (decoded bytes). */
  writeBlockMinLen: 1,
  writeBlockMaxLen: 1024 * 1024,
  /**
   * The size a file written through a write handle (fs/open `mode: "replace"` + fs/writeBlock) may
   * reach: no block may end beyond it. The blocks go to a staging file on the target's file system,
   * which is why this is a bound and not a memory budget.
   */
  writeHandleMaxBytes: 16 * 1024 * 1024 * 1024,
  /** Open read handles per connection, and handle id length in bytes. */
  maxOpenHandlesPerConnection: 128,
  handleIdMaxBytes: 32,
  /** fs/readDirectory stops after this many entries. */
  readDirectoryMaxEntries: 50_000,
  /** fs/walk bounds. */
  walkMaxDepth: 64,
  walkMaxDirectories: 10_000,
  walkMaxEntries: 50_000,
  walkMaxResponseBytes: 4 * 1024 * 1024,
  /**
   * One JSON-RPC message received by the server (`serve --max-message-bytes`). It is also the
   * server's limit for fs/writeFile, whose bytes travel inside the message as base64: about 48 MiB
   * of data; a larger message is refused whole, naming this limit.
   */
  rpcMaxMessageBytes: 64 * 1024 * 1024,
  /**
   * Bytes of one native path (UTF-8 once decoded from its URI): Linux's PATH_MAX. No system call
   * there takes a longer one, and every check that walks a path's components is bounded by it.
   */
  pathMaxBytes: 4096,
  /**
   * Entries of one sandbox policy (`file_system.entries`): building its sandbox weighs every path
   * it mounts or masks against every entry.
   */
  policyMaxEntries: 256,
  /** Arrays and objects inside one method's params (the deepest real context nests 6 levels). */
  paramsMaxDepth: 64,
  /**
   * Bytes of finished replies the server holds until their client reads them, per connection
   * (`serve --max-unsent-bytes`) and across the whole server (`--max-unsent-bytes-total`). While a
   * budget is full, no new request starts: it waits in its connection's queue until the client
   * reads. Requests already running still finish and are held, so memory stays within the budget
   * plus what the running requests return; a connection that holds nothing and runs nothing may
   * always start one request, so a client that reads is never stalled by one that does not.
   */
  replyMaxUnsentBytesPerConnection: 128 * 1024 * 1024,
  replyMaxUnsentBytesTotal: 1024 * 1024 * 1024,
  /** Request bytes the helper accepts on stdin (a writeFile of the largest allowed payload plus framing). */
  helperMaxRequestBytes: 1024 * 1024 * 1024,
  /** Helper stdout the broker accepts (readFile of 512 MiB as base64 plus framing). */
  helperMaxReplyBytes: 720 * 1024 * 1024,
  /** Helper stderr kept for error messages. */
  helperMaxStderrBytes: 4 * 1024,
  /** Default helper run time before the whole sandboxed process tree is killed. */
  helperTimeoutMs: 60_000,
  /**
   * The same for `fs-sandbox mcp` (when its --timeout names none): the reference MCP server bounds
   * its file system calls to 15 s, well inside the 60 s an MCP client waits for an answer.
   */
  mcpHelperTimeoutMs: 15_000,
  /**
   * Deny globs are enforced on Linux by masking the paths that match when the sandbox is built. The
   * scan that finds them stops at this many entries, and at this depth below a pattern's literal
   * prefix for `**`; a scan stopped with entries left unseen refuses the sandbox, never weakens it.
   */
  denyGlobScanMaxEntries: 20_000,
  /**
   * Entries one recursive fs/remove or fs/copy may hold. The tree is walked whole before anything is
   * changed (to refuse what cannot complete), and its listings are kept while it is walked.
   */
  treeMaxEntries: 1_000_000,
  /**
   * Entries the broker looks at, per request, below denied paths to learn the identities of files
   * that have other names (hard links): those names are refused by identity.
   */
  deniedIdentityScanEntries: 10_000,
  /**
   * Directory entries a command's surface scan walks below its writable roots, before the command
   * (to find the repositories whose config and hooks it binds read-only) and after it (to remove
   * the `.git`, `.codex` and `.agents` it made). Past it the command is refused before it starts;
   * a command that itself grew the tree past it is reported as not swept whole.
   */
  commandSurfaceScanEntries: 1_000_000,
  /** Repositories (git directories) a command's writable roots may hold: each costs a few mounts. */
  commandSurfaceRepositories: 256,
  /**
   * Bytes one fs/copy may write (allocated size: a sparse file counts its data, not its holes). A
   * larger copy is refused before it starts.
   */
  copyMaxBytes: 8 * 1024 * 1024 * 1024,
  denyGlobScanMaxDepth: 32,
  /**
   * The largest text fs/edit reads, and fs/readTextFile decodes whole (its sha256 and `totalLines`
   * describe all of it, and an edit must see every match): this bounds the helper's memory per text
   * request. A larger file's readTextFile window is streamed (without a sha256), its content at
   * most this many bytes; a whole read of it, or an edit whose result would be larger, is refused.
   */
  textMaxBytes: 16 * 1024 * 1024,
  /** fs/edit: edits per request, and the UTF-8 bytes of each `oldText` and `newText`. */
  editMaxEdits: 100,
  editMaxTextBytes: 1024 * 1024,
  /** Commands (`process/start`): live processes per connection, id length, argv entries. */
  processesPerConnection: 16,
  processIdMaxBytes: 256,
  processMaxArgs: 4096,
  /** Longest `timeoutMs` a command may ask for, and longest `waitMs` of one process/read. */
  processMaxTimeoutMs: 24 * 60 * 60 * 1000,
  processReadMaxWaitMs: 30_000,
  /**
   * The output a library `broker.run` collects (stdout and stderr together), and the most its
   * `outputBytesCap` may ask for: it is held in memory until the command ends (`spawn` streams).
   */
  commandRunOutputBytes: 64 * 1024 * 1024,
  /** Output kept per process for process/read (oldest chunks dropped beyond it). */
  processRetainedOutputBytes: 1024 * 1024,
  /**
   * Output notifications not yet written to a slow client, per connection: past this the server
   * stops reading the commands' pipes (they block writing) until the client reads.
   */
  processUnsentOutputBytes: 4 * 1024 * 1024,
  /** Bytes waiting to be written to one command's stdin before process/write is refused. */
  processStdinBufferBytes: 4 * 1024 * 1024,
  /**
   * The app-server's process/spawn and command/exec: the output kept per stream when the request
   * names no `outputBytesCap` (the reference's default), the run time when it names no `timeoutMs`,
   * and how long output may still drain once the process exited (its children may hold the pipes).
   */
  v2DefaultOutputBytesCap: 1024 * 1024,
  v2DefaultTimeoutMs: 10_000,
  v2OutputDrainMs: 2_000,
  /**
   * fs/watch: watches per connection, and changed paths one watch holds between two fs/changed
   * notifications (beyond it they collapse into the watched path itself: something changed there).
   */
  watchesPerConnection: 256,
  watchPendingPaths: 1024,
  /**
   * A command's network allowlist: entries in `allow` and in `deny` (each list), and characters of
   * one entry (a 253-character name, `*.`, and `:65535`).
   */
  networkMaxEntries: 256,
  networkEntryMaxChars: 262,
  /**
   * The proxy of one command: connections open at once (more are refused, and logged); bytes it
   * relays in both directions together over the command's life (past it every connection is closed
   * and new ones are refused); how long a connection may sit without a byte either way, how long a
   * client may take to send its request, and how long the look-up and the connection of one
   * destination may take.
   */
  networkMaxConnections: 64,
  networkMaxBytes: 16 * 1024 * 1024 * 1024,
  networkIdleTimeoutMs: 5 * 60 * 1000,
  networkRequestTimeoutMs: 30_000,
  networkConnectTimeoutMs: 30_000,
  /** Look-ups one command's proxy runs at once (getaddrinfo runs on the broker's shared thread pool). */
  networkMaxLookups: 4,
  /** Audit lines one command's refused connections may write; past it one line says the rest were dropped. */
  networkMaxRefusalEvents: 1000,
  /** How long the set-up step inside the sandbox may take to hand the broker its listeners. */
  networkSetupTimeoutMs: 30_000,
  /** Loopback ports a managed network (`managedNetwork.loopbackPorts`) may name. */
  networkMaxManagedPorts: 16,
  /** Host unix sockets one context may relay to its commands (`unix_sockets`, `--allow-unix-socket`). */
  unixSocketMaxEntries: 16,
  /** fs/search: matches returned (default and most), context lines, characters kept of one line. */
  searchDefaultResults: 200,
  searchMaxResults: 10_000,
  searchMaxContextLines: 10,
  searchMaxLineChars: 500,
  /** fs/glob: entries returned (default and most). */
  globDefaultResults: 1_000,
  globMaxResults: 50_000,
  /** fs/search and fs/glob: reply size, files ripgrep may report, and one JSON line of its output. */
  searchMaxResponseBytes: 4 * 1024 * 1024,
  searchMaxFiles: 200_000,
  searchMaxOutputLineBytes: 64 * 1024 * 1024,
  /**
   * How long ripgrep may run before the helper stops it and replies with what it has (`truncated`):
   * below the default helper timeout, so the reply is a partial result rather than a killed helper.
   */
  searchMaxRunMs: 50_000,
  /** Operations in one fs/batch. */
  batchMaxOperations: 256,
  /**
   * JSON bytes of all results of one fs/batch together (file bytes count as their base64). An
   * operation whose result would pass it is answered `file_too_large` instead; the rest still run.
   */
  batchMaxReplyBytes: 48 * 1024 * 1024,
  /**
   * fs/applyPatch: UTF-8 bytes of the patch text (each file's new text is also bounded by
   * `textMaxBytes`), files it names (an atomic patch holds one open directory per file until it is
   * committed), and update chunks across all its files.
   */
  patchMaxBytes: 16 * 1024 * 1024,
  patchMaxFiles: 256,
  patchMaxChunks: 10_000,
} as const;
