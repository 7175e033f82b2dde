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

  /** Writes one reply; false when the sink closed before its end. */
  private async write(parts: Iterable<Buffer>): Promise<boolean> {
    const iterator = parts[Symbol.iterator]();
    let current = iterator.next();
    while (current.done !== true) {
      if (this.sink.closed) return false;
      // One part of lookahead, so the sink knows which part ends the reply.
      const next = iterator.next();
      const room = this.sink.write(current.value, next.done === true);
      current = next;
      if (!room) await this.sink.waitForRoom();
    }
    return true;
  }
}
