export interface ReplyBudgetLimits {
  /** Unsent reply bytes one connection may hold before its new requests wait. */
  perConnection: number;
  /** Unsent reply bytes every connection together may hold before new requests wait. */
  total: number;
}

/** One connection's share of the budget. */
export interface ReplyAccount {
  /** Bytes of this connection's finished replies not yet written. */
  readonly held: number;
  /** Whether a new request of this connection may start while `running` of its requests run. */
  mayStart(running: number): boolean;
  /** Counts a finished reply until the returned release is called (calling it again does nothing). */
  hold(bytes: number): () => void;
  /** The connection is gone: whatever it still held is released, and it is woken no more. */
  close(): void;
}

/**
 * The bytes of finished replies that wait for slow or stalled clients. A reply's size is known only
 * once its request has finished, so the budget cannot refuse a reply; it stops new requests from
 * starting instead, and lets them start again as replies are written. One client that stops reading
 * then costs at most its budget plus what its running requests return, however many it queued.
 */
export class ReplyBudget {
  private heldTotal = 0;
  private readonly wakers = new Set<() => void>();

  constructor(private readonly limits: ReplyBudgetLimits) {}

  get held(): number {
    return this.heldTotal;
  }

  /** An account for a new connection; `onRoom` is called whenever bytes are released anywhere. */
  open(onRoom: () => void): ReplyAccount {
    let held = 0;
    let closed = false;
    const budget = this;
    const give = (bytes: number) => {
      held -= bytes;
      budget.heldTotal -= bytes;
      // Bytes released by one connection may be the room another one waits for.
      for (const wake of [...budget.wakers]) wake();
    };
    this.wakers.add(onRoom);
    return {
      get held() {
        return held;
      },
      mayStart(running) {
        // Without this exception one stalled client holding the whole server's budget would stall
        // every other client; with it, a client that reads always gets one request at a time.
        if (held === 0 && running === 0) return true;
        return held < budget.limits.perConnection && budget.heldTotal < budget.limits.total;
      },
      hold(bytes) {
        if (closed) return () => undefined;
        held += bytes;
        budget.heldTotal += bytes;
        let released = false;
        return () => {
          if (released || closed) return;
          released = true;
          give(bytes);
        };
      },
      close() {
        if (closed) return;
        closed = true;
        budget.wakers.delete(onRoom);
        if (held > 0) give(held);
      },
    };
  }
}
