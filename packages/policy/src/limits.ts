/** Limits (DESIGN §9). Every size, count and duration the project bounds is named here. */
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
  denyGlobScanMaxDepth: 32,
} as const;
