import type { ReplyOutput } from './rpc-connection.js';

interface QueuedReply {
  parts: Iterable<Buffer>;
  written(): void;
}

/** Where a pump writes: one reply's parts, then its end (`last`), with backpressure. */
export interface ReplySink {
  /** Writes one part (`last` ends the reply); false when the peer should catch up before the next. */
  write(part: Buffer, last: boolean): boolean;
  /** Resolves once the peer has taken enough (or the sink is closed). */
  waitForRoom(): Promise<void>;
  /** True once nothing more can be written (the peer is gone). */
  readonly closed: boolean;
}

/**
 * Writes replies in order, pulling each part of a reply only when the sink has room: a 512 MiB
 * read's base64 (~716 MiB) is then encoded a slice at a time as the client reads it, instead of
 * being queued whole in the transport. Small replies are written synchronously.
 */
export class ReplyPump implements ReplyOutput {
  private readonly queue: QueuedReply[] = [];
  private running = false;
  private idle: Array<() => void> = [];

  constructor(private readonly sink: ReplySink) {}

  send(parts: Iterable<Buffer>, written: () => void): void {
    if (this.sink.closed) {
      written();
      return;
    }
    this.queue.push({ parts, written });
    if (!this.running) void this.run();
  }

  /** Resolves when every reply pushed so far has been written (or dropped because the sink closed). */
  whenIdle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      for (let reply = this.queue.shift(); reply !== undefined; reply = this.queue.shift()) {
        try {
          if (!(await this.write(reply.parts))) return;
        } finally {
          reply.written();
        }
      }
    } finally {
      for (const dropped of this.queue.splice(0)) dropped.written();
      this.running = false;
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /**
   * Writes one reply; false when the sink closed before its end. Parts smaller than
   * `COALESCED_BYTES` are joined before they reach the sink: a small reply is a few parts (its JSON
   * around a base64 value), and each write to a pipe or socket can wake the peer on its own, which
   * costs it more than the copy. A larger part (a large read's base64 slice) goes to the sink as it
   * is, never copied.
   */
  private async write(parts: Iterable<Buffer>): Promise<boolean> {
    const iterator = parts[Symbol.iterator]();
    const joined = new JoinedParts();
    let current = iterator.next();
    while (current.done !== true) {
      // One part of lookahead, so the sink knows which part ends the reply.
      const next = iterator.next();
      for (const [chunk, last] of chunksFor(current.value, next.done === true, joined)) {
        if (this.sink.closed) return false;
        if (!this.sink.write(chunk, last)) await this.sink.waitForRoom();
      }
      current = next;
    }
    return true;
  }
}

/** What to write once `part` is pulled: nothing while small parts gather, else one or two chunks in order. */
function chunksFor(part: Buffer, last: boolean, joined: JoinedParts): Array<[Buffer, boolean]> {
  if (part.length < COALESCED_BYTES) {
    joined.add(part);
    return last || joined.bytes >= COALESCED_BYTES ? [[joined.take(), last]] : [];
  }
  return joined.holding
    ? [
        [joined.take(), false],
        [part, last],
      ]
    : [[part, last]];
}

/** Below this size parts are joined into one write; at or above it a part is written as it is. */
export const COALESCED_BYTES = 64 * 1024;

/** Small parts waiting to be written as one buffer. */
class JoinedParts {
  private parts: Buffer[] = [];
  bytes = 0;

  get holding(): boolean {
    return this.parts.length > 0;
  }

  add(part: Buffer): void {
    this.parts.push(part);
    this.bytes += part.length;
  }

  take(): Buffer {
    const joined =
      this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.bytes = 0;
    return joined;
  }
}
