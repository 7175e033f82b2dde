import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { APP_SERVER_METHOD_TABLE, notificationSchemasOf } from '@fs-sandbox/policy';
import { CLI_BIN } from '../fixtures/conformance/serve-process.js';
import { codexBinary } from './codex-binary.js';
import { JsonLinesChild } from './json-lines-child.js';

const WS_LINE_BRIDGE = fileURLToPath(new URL('./ws-line-bridge.cjs', import.meta.url));

/** One message from an app-server: a reply (id) or a notification (method). */
export interface AppMessage {
  id?: string | number;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  params?: Record<string, unknown>;
}

/** The app-server surface's notifications with the schemas its method table declares for them. */
const NOTIFICATION_SCHEMAS = notificationSchemasOf(APP_SERVER_METHOD_TABLE);

/**
 * An app-server child spoken to over stdio, line by line: `fs-sandbox app-server` or the pinned
 * reference `codex app-server`. Replies are matched by id; notifications are kept in arrival order.
 * A notification of the surface is parsed by its schema from the method table, whoever sent it:
 * one that does not parse is kept in `malformed` (the server's senders are typed from the same
 * schemas, the reference is what they were written from).
 */
export class AppServerClient extends JsonLinesChild {
  readonly notifications: AppMessage[] = [];
  readonly malformed: Array<{ method: string; issues: string }> = [];
  private readonly replies = new Map<string | number, AppMessage>();
  private nextId = 1;

  protected take(line: string): void {
    const message = JSON.parse(line) as AppMessage;
    if (message.id !== undefined && message.method === undefined) {
      this.replies.set(message.id, message);
      return;
    }
    const parsed =
      message.method === undefined
        ? undefined
        : NOTIFICATION_SCHEMAS.get(message.method)?.().safeParse(message.params);
    if (parsed?.success === false)
      this.malformed.push({ method: message.method as string, issues: parsed.error.message });
    this.notifications.push(message);
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

  /**
   * One connection to a `fs-sandbox app-server --listen ws://…`, through a child that bridges its
   * text frames to lines (ws-line-bridge.cjs): stopping it closes the connection.
   */
  static overWebSocket(url: string, token: string): AppServerClient {
    const child = spawn(process.execPath, [WS_LINE_BRIDGE, url, token], { stdio: ['pipe', 'pipe', 'pipe'] });
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

  sendMessage(message: Record<string, unknown>): void {
    this.send(JSON.stringify(message));
  }

  async request(method: string, params?: unknown): Promise<AppMessage> {
    const id = this.nextId++;
    this.sendMessage(params === undefined ? { id, method } : { id, method, params });
    return this.replyFor(id);
  }

  async initialize(experimentalApi = true): Promise<AppMessage> {
    const reply = await this.request('initialize', {
      clientInfo: { name: 'fs-sandbox-tests', title: null, version: '1' },
      capabilities: { experimentalApi },
    });
    this.sendMessage({ method: 'initialized' });
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
}
