import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { CLI_BIN } from '../fixtures/conformance/serve-process.js';
import { codexBinary } from './codex-binary.js';

/** One message from an app-server: a reply (id) or a notification (method). */
export interface AppMessage {
  id?: string | number;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  params?: Record<string, unknown>;
}

/**
 * An app-server child spoken to over stdio, line by line: `fs-sandbox app-server` or the pinned
 * reference `codex app-server`. Replies are matched by id; notifications are kept in arrival order.
 */
export class AppServerClient {
  readonly notifications: AppMessage[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private buffered = '';
  private readonly replies = new Map<string | number, AppMessage>();
  private waiters: Array<() => void> = [];
  private nextId = 1;

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let newline = this.buffered.indexOf('\n'); newline !== -1; newline = this.buffered.indexOf('\n')) {
        const message = JSON.parse(this.buffered.slice(0, newline)) as AppMessage;
        this.buffered = this.buffered.slice(newline + 1);
        if (message.id !== undefined && message.method === undefined) this.replies.set(message.id, message);
        else this.notifications.push(message);
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

  /** `fs-sandbox app-server` with these flags, run as `command` (a prefix such as setpriv) if given. */
  static ours(
    args: string[],
    options: { cwd: string; env?: Record<string, string>; prefix?: string[] },
  ): AppServerClient {
    const argv = [...(options.prefix ?? []), process.execPath, CLI_BIN, 'app-server', ...args];
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new AppServerClient(child);
  }

  /** The pinned reference, offline (its CODEX_HOME must lie outside TMPDIR). */
  static reference(options: {
    cwd: string;
    codexHome: string;
    env?: Record<string, string>;
  }): AppServerClient {
    const child = spawn(codexBinary() as string, ['app-server', '--listen', 'stdio://'], {
      cwd: options.cwd,
      env: { PATH: '/usr/bin:/bin', CODEX_HOME: options.codexHome, HOME: options.codexHome, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new AppServerClient(child);
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async request(method: string, params?: unknown): Promise<AppMessage> {
    const id = this.nextId++;
    this.send(params === undefined ? { id, method } : { id, method, params });
    return this.replyFor(id);
  }

  async initialize(experimentalApi = true): Promise<AppMessage> {
    const reply = await this.request('initialize', {
      clientInfo: { name: 'fs-sandbox-tests', title: null, version: '1' },
      capabilities: { experimentalApi },
    });
    this.send({ method: 'initialized' });
    return reply;
  }

  async replyFor(id: string | number, timeoutMs = 20_000): Promise<AppMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = this.replies.get(id);
      if (reply !== undefined) {
        this.replies.delete(id);
        return reply;
      }
      if (this.child.exitCode !== null)
        throw new Error(`server exited before replying to ${id}: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no reply to ${id} within ${timeoutMs} ms: ${this.stderr}`);
      await this.nextEvent(deadline);
    }
  }

  /** Waits for a notification matching `match`, removes it and those before it, and returns them all. */
  async notificationsUntil(
    match: (message: AppMessage) => boolean,
    timeoutMs = 20_000,
  ): Promise<AppMessage[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.notifications.findIndex(match);
      if (index !== -1) return this.notifications.splice(0, index + 1);
      if (Date.now() > deadline)
        throw new Error(`no matching notification within ${timeoutMs} ms: ${this.stderr}`);
      await this.nextEvent(deadline);
    }
  }

  /** Half-closes stdin and waits for the exit. */
  async stop(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }

  private nextEvent(deadline: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, Math.min(200, deadline - Date.now())));
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
