const NEWLINE = 0x0a;

export interface LineSink {
  line(bytes: Buffer): void;
  /** A line longer than the limit ended; its bytes were dropped as they arrived. */
  oversized(bytes: number): void;
}

/**
 * Newline framing with a hard cap: a line longer than `maxBytes` is discarded chunk by chunk as it
 * streams in (never buffered whole) and reported once its newline arrives, so a client cannot make
 * the server hold an unbounded message in memory.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  private discardedBytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sink: LineSink,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.pendingBytes > 0 || this.discarding) this.finishLine();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.discarding) {
      this.discardedBytes += piece.length;
      return;
    }
    if (this.pendingBytes + piece.length > this.maxBytes) {
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + piece.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    // Copy: the stream may reuse its chunk buffers after we return.
    this.pending.push(Buffer.from(piece));
    this.pendingBytes += piece.length;
  }

  private finishLine(): void {
    if (this.discarding) {
      const bytes = this.discardedBytes;
      this.discarding = false;
      this.discardedBytes = 0;
      this.sink.oversized(bytes);
      return;
    }
    const line = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    // Blank lines (including a bare `\r`) carry no message; skipping them keeps `\r\n` input usable.
    if (line.length === 0 || isBlank(line)) return;
    this.sink.line(line);
  }
}

function isBlank(line: Buffer): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}
