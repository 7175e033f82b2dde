/** Limits. Every size, count and duration the project bounds is named here. */
export const LIMITS = {
  /** fs/readFile refuses files larger than this. */
  readFileMaxBytes: 512 * 1024 * 1024,
  /** fs/readBlock `len` range. */
  readBlockMinLen: 1,
  readBlockMaxLen: 1024 * 1024,
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
   * Bytes one fs/copy may write (allocated size: a sparse file counts its data, not its holes). A
   * larger copy is refused before it starts.
   */
  copyMaxBytes: 8 * 1024 * 1024 * 1024,
  denyGlobScanMaxDepth: 32,
  /** Operations in one fs/batch. */
  batchMaxOperations: 256,
  /**
   * JSON bytes of all results of one fs/batch together (file bytes count as their base64). An
   * operation whose result would pass it is answered `file_too_large` instead; the rest still run.
   */
  batchMaxReplyBytes: 48 * 1024 * 1024,
} as const;
