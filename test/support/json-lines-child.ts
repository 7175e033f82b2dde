import type { ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * A server child spoken to with one JSON message per line on stdio (`fs-sandbox serve`,
 * `fs-sandbox app-server`, the reference's `codex exec-server` and `codex app-server`): its stdout
 * cut into lines for the subclass's `take`, its stderr kept, its exit awaited, and waiters woken on
 * every line and at the exit so that a wait for a reply never outlives the server.
 */
export abstract class JsonLinesChild {
  stderr = '';
  readonly exited: Promise<number | null>;
  private buffered = '';
  private waiters: Array<() => void> = [];

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let newline = this.buffered.indexOf('\n'); newline !== -1; newline = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.take(line);
      }
      this.wake();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.exited.then(() => this.wake());
  }

  /** One complete line of the server's stdout, without its newline. */
  protected abstract take(line: string): void;

  send(line: string): void {
    this.child.stdin.write(line.endsWith('\n') ? line : `${line}\n`);
  }

  /** Half-closes stdin (accepted requests still finish) and waits for the exit code. */
  async stop(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Resolves at the next line or the exit, or (given one) at the deadline, whichever is first. */
  protected nextEvent(deadline?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer =
        deadline === undefined
          ? null
          : setTimeout(resolve, Math.max(0, Math.min(200, deadline - Date.now())));
      this.waiters.push(() => {
        if (timer !== null) clearTimeout(timer);
        resolve();
      });
    });
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
