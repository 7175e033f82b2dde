import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * `fs-sandbox serve --listen stdio` as a child (or another server of the same wire, `child`), with
 * a client that never holds a reply as text: it counts each reply's bytes up to its newline and
 * keeps only the first 200 and the last 200 bytes, so a 512 MiB read (~716 MiB of JSON) can be
 * timed without the client being the bottleneck.
 */
export class ServeClient {
  constructor(
    cliBin,
    args = [],
    child = spawn(process.execPath, [cliBin, 'serve', '--listen', 'stdio', ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  ) {
    this.child = child;
    this.current = { bytes: 0, head: '', tail: '' };
    this.waiters = [];
    this.replies = [];
    this.stderr = '';
    this.child.stderr.on('data', (chunk) => {
      this.stderr += chunk;
    });
    this.child.stdout.on('data', (chunk) => this.take(chunk));
    // A server that exits wakes the waiters, so `next()` reports it instead of waiting forever,
    // and a write to it after that (EPIPE) is not a crash of the bench.
    this.child.stdin.on('error', () => {});
    this.child.once('exit', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  take(chunk) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.append(chunk.subarray(start, newline));
      this.replies.push(this.current);
      this.current = { bytes: 0, head: '', tail: '' };
      start = newline + 1;
    }
    this.append(chunk.subarray(start));
    if (this.replies.length > 0) for (const wake of this.waiters.splice(0)) wake();
  }

  append(piece) {
    this.current.bytes += piece.length;
    if (this.current.head.length < 200) this.current.head += piece.subarray(0, 200).toString('latin1');
    this.current.tail = (this.current.tail + piece.subarray(-200).toString('latin1')).slice(-200);
  }

  async next() {
    while (this.replies.length === 0) {
      if (this.child.exitCode !== null)
        throw new Error(`the server exited (${this.child.exitCode}): ${this.stderr.trim()}`);
      await new Promise((resolve) => this.waiters.push(resolve));
    }
    return this.replies.shift();
  }

  /** Sends one request and resolves with {ms, reply} once its whole reply has arrived. */
  async time(message) {
    const started = performance.now();
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
    const reply = await this.next();
    return { ms: performance.now() - started, reply };
  }

  async handshake() {
    this.child.stdin.write(
      `${JSON.stringify({ id: 'init', method: 'initialize', params: { clientName: 'bench' } })}\n`,
    );
    await this.next();
    this.child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
  }

  /** The server's peak resident memory so far (VmHWM), in bytes. */
  peakResidentBytes() {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
    return Number(match[1]) * 1024;
  }

  async stop() {
    this.child.stdin.end();
    if (this.child.exitCode === null) await new Promise((resolve) => this.child.once('exit', resolve));
  }
}
