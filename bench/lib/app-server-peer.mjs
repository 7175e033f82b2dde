import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * One app-server child spoken to over stdio in the reference's wire (newline-delimited JSON-RPC
 * without `jsonrpc`): `fs-sandbox app-server` or `codex app-server`. Replies are matched by id;
 * notifications go to whoever waits for one, else are dropped (the bench waits for the one it
 * times). A server that exits fails every waiter, so a round never hangs.
 */
export class AppServerPeer {
  constructor(name, argv, options) {
    this.name = name;
    this.child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], ...options });
    this.stderr = '';
    this.nextId = 1;
    this.pending = new Map();
    this.watchers = new Set();
    this.child.stderr.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    this.child.stdin.on('error', () => {});
    createInterface({ input: this.child.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      const message = JSON.parse(line);
      if (message.id !== undefined && message.method === undefined) {
        this.pending.get(message.id)?.(message);
        this.pending.delete(message.id);
        return;
      }
      for (const watcher of [...this.watchers]) watcher(message);
    });
    this.child.once('exit', (code) => {
      const gone = { error: { code: -1, message: `${name} exited (${code}): ${this.stderr.trim()}` } };
      for (const settle of this.pending.values()) settle(gone);
      this.pending.clear();
      for (const watcher of [...this.watchers]) watcher(gone);
    });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  /** A reply's result, or a thrown error naming the peer and the method. */
  async call(method, params) {
    const reply = await this.request(method, params);
    if (reply.error !== undefined) throw new Error(`${this.name} ${method}: ${JSON.stringify(reply.error)}`);
    return reply.result;
  }

  /** The first notification matching `match` from now on, within `timeoutMs`. */
  notification(match, timeoutMs = 20_000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(watch);
        reject(new Error(`${this.name}: no matching notification within ${timeoutMs} ms`));
      }, timeoutMs);
      const watch = (message) => {
        if (message.error !== undefined) {
          clearTimeout(timer);
          this.watchers.delete(watch);
          reject(new Error(message.error.message));
        } else if (match(message)) {
          clearTimeout(timer);
          this.watchers.delete(watch);
          resolve(message);
        }
      };
      this.watchers.add(watch);
    });
  }

  async initialize() {
    await this.call('initialize', {
      clientInfo: { name: 'fs-sandbox-bench', title: null, version: '1' },
      capabilities: { experimentalApi: true },
    });
    this.child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
  }

  async stop() {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
