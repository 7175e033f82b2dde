/**
 * A command's `outputBytesCap` (stdout and stderr together): the chunk that reaches it is cut there,
 * and everything after it dropped, so what was delivered is exactly the first `cap` bytes in order.
 * One rule for the server's process table, the library's commands and the remote client's.
 */
export class OutputCap {
  private delivered = 0;
  /** The cap cut the output (a chunk ending exactly at it counts: nothing more is delivered). */
  reached = false;

  constructor(private readonly cap: number | null) {}

  /** The part of `chunk` that is still under the cap (empty once it was reached). */
  take(chunk: Buffer): Buffer {
    if (this.reached) return chunk.subarray(0, 0);
    let kept = chunk;
    if (this.cap !== null && this.delivered + kept.length >= this.cap) {
      kept = kept.subarray(0, this.cap - this.delivered);
      this.reached = true;
    }
    this.delivered += kept.length;
    return kept;
  }
}

/** A command's end as a promise, with its two ways to settle (a caller that only awaits output never sees it). */
export function deferredExit<Exit>(): {
  exited: Promise<Exit>;
  settle: (exit: Exit) => void;
  fail: (error: Error) => void;
} {
  let settle: (exit: Exit) => void = () => {};
  let fail: (error: Error) => void = () => {};
  const exited = new Promise<Exit>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  exited.catch(() => {});
  return { exited, settle, fail };
}
