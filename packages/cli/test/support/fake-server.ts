import { PassThrough } from 'node:stream';
import type {
  CallInfo,
  CallOptions,
  CommandLaunchRequest,
  CommandLaunchSpec,
} from '@fs-sandbox/broker/internal';
import { FsError, type HelperMethod, type ResultOf } from '@fs-sandbox/policy';
import { createServer, type FsRpcServer, type ServerOptions } from '../../src/server/server.js';
import type { ServerBroker } from '../../src/server/server-broker.js';

/**
 * A broker over an in-memory map of path URI -> bytes. It implements just enough of each method for
 * the server's tests, records every call, and can hold calls open until they are aborted, so the
 * tests can observe concurrency and clean-up deterministically.
 */
export class FakeBroker implements ServerBroker {
  readonly files = new Map<string, Buffer>();
  /** Write handles' staging content by target path (fs/stageWrite until fs/publishStaged or fs/discardStaged). */
  readonly staging = new Map<string, Buffer>();
  /** fs/writeRange on these paths fails (a block refused under the handle's sandbox). */
  readonly failWrites = new Set<string>();
  readonly calls: Array<{ method: string; params: unknown }> = [];
  /** Calls on these paths wait until released or aborted. */
  readonly holdPaths = new Set<string>();
  readonly aborted: string[] = [];
  sandboxed = false;
  running = 0;
  maxRunning = 0;
  private readonly releases = new Set<() => void>();

  /** Commands run unsandboxed here, as the in-process route would run them. */
  async prepareCommand(_sandbox: unknown, request: CommandLaunchRequest): Promise<CommandLaunchSpec> {
    return {
      backend: null,
      sandboxProgram: null,
      sandboxArgs: [],
      argv: request.argv,
      env: request.env,
      cwd: request.cwd,
    };
  }

  /** Files the fake holds are writable, anything else is out of reach. */
  async explainAccess(params: unknown): Promise<ResultOf<'fs/explainAccess'>> {
    this.calls.push({ method: 'fs/explainAccess', params });
    const path = (params as { path?: unknown } | null)?.path;
    return typeof path === 'string' && this.files.has(path)
      ? { access: 'write', reason: 'held by the fake broker' }
      : { access: 'none', reason: 'not held by the fake broker' };
  }

  call<M extends HelperMethod>(method: M, params: unknown, options?: CallOptions): Promise<ResultOf<M>> {
    return this.callWithInfo(method, params, options).then(({ result }) => result);
  }

  async callWithInfo<M extends HelperMethod>(
    method: M,
    params: unknown,
    options: CallOptions = {},
  ): Promise<{ result: ResultOf<M>; info: CallInfo }> {
    this.calls.push({ method, params });
    const fields = (params ?? {}) as Record<string, unknown>;
    const path = typeof fields.path === 'string' ? fields.path : '';
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      if (this.holdPaths.has(path)) await this.hold(path, options.signal);
      const result = this.perform(method, fields, path) as ResultOf<M>;
      return { result, info: { sandboxed: this.sandboxed, backend: this.sandboxed ? 'bwrap' : null } };
    } finally {
      this.running -= 1;
    }
  }

  /** Lets every held call continue. */
  releaseAll(): void {
    for (const release of [...this.releases]) release();
  }

  async close(): Promise<void> {}

  private hold(path: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const release = () => {
        this.releases.delete(release);
        resolve();
      };
      this.releases.add(release);
      signal?.addEventListener('abort', () => {
        this.releases.delete(release);
        this.aborted.push(path);
        reject(signal.reason);
      });
    });
  }

  private stagingOf(path: string): Buffer {
    const staged = this.staging.get(path);
    if (!staged) throw new FsError('not_found', `no staging file for ${path}`);
    return staged;
  }

  private perform(method: string, fields: Record<string, unknown>, path: string): unknown {
    if (typeof fields.path !== 'string' || !fields.path.startsWith('file:///')) {
      throw new FsError('invalid_params', 'invalid URI: relative URL without a base');
    }
    const data = this.files.get(path);
    switch (method) {
      case 'fs/readFile':
        if (!data) throw new FsError('not_found', 'No such file or directory (os error 2)');
        return { dataBase64: data.toString('base64') };
      case 'fs/writeFile':
        this.files.set(path, Buffer.from(String(fields.dataBase64), 'base64'));
        return {};
      case 'fs/getMetadata':
        if (!data) throw new FsError('not_found', 'No such file or directory (os error 2)');
        return {
          isDirectory: false,
          isFile: true,
          isSymlink: false,
          size: data.length,
          createdAtMs: 0,
          modifiedAtMs: 0,
          permissions: '0644',
          accessedAtMs: 0,
          hardLinks: 1,
        };
      case 'fs/openForRead':
        if (!data) throw new FsError('not_found', 'No such file or directory (os error 2)');
        return { size: data.length, dev: '1', ino: String(path.length) };
      case 'fs/readRange': {
        if (!data) throw new FsError('not_found', 'No such file or directory (os error 2)');
        const offset = Number(fields.offset);
        const chunk = data.subarray(offset, offset + Number(fields.len));
        return { chunk, eof: chunk.length < Number(fields.len) };
      }
      case 'fs/stageWrite':
        this.staging.set(path, Buffer.alloc(0));
        return { staged: { name: '.fs-sandbox-0123456789abcdef01234567-1.tmp', dev: '1', ino: '7' } };
      case 'fs/writeRange': {
        if (this.failWrites.has(path)) throw new FsError('permission_denied', `cannot write ${path}`);
        const staged = this.stagingOf(path);
        const chunk = Buffer.from(String(fields.chunk), 'base64');
        const end = Number(fields.offset) + chunk.length;
        const grown = Buffer.concat([staged, Buffer.alloc(Math.max(0, end - staged.length))]);
        chunk.copy(grown, Number(fields.offset));
        this.staging.set(path, grown);
        return {};
      }
      case 'fs/publishStaged':
        this.files.set(path, this.stagingOf(path));
        this.staging.delete(path);
        return {};
      case 'fs/discardStaged':
        this.staging.delete(path);
        return {};
      default:
        throw new FsError('internal_error', `fake broker has no ${method}`);
    }
  }
}

export interface Reply {
  id: string | number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data: { errorKind: string } };
}

/** A client on an in-memory stdio pair: write raw lines, read parsed replies in arrival order. */
export class StdioClient {
  readonly input = new PassThrough();
  readonly output = new PassThrough();
  readonly done: Promise<void>;
  private buffered = '';
  private readonly replies: Reply[] = [];
  private readonly waiters: Array<() => void> = [];
  readonly rawLines: string[] = [];
  private nextId = 1;

  constructor(readonly server: FsRpcServer) {
    this.output.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      let newline = this.buffered.indexOf('\n');
      while (newline !== -1) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.rawLines.push(line);
        this.replies.push(JSON.parse(line) as Reply);
        for (const wake of this.waiters.splice(0)) wake();
        newline = this.buffered.indexOf('\n');
      }
    });
    this.done = server.serveStdio(this.input, this.output);
  }

  send(line: string | Buffer): void {
    this.input.write(line);
    if (typeof line === 'string' && !line.endsWith('\n')) this.input.write('\n');
  }

  /** Sends a request with a fresh numeric id (or the given one) and waits for its reply. */
  async request(method: string, params?: unknown, id: string | number = this.nextId++): Promise<Reply> {
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return this.replyFor(id);
  }

  notify(method: string, params: unknown = {}): void {
    this.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  async handshake(): Promise<void> {
    const reply = await this.request('initialize', { clientName: 'test' }, 'init');
    if (!reply.result) throw new Error(`initialize failed: ${JSON.stringify(reply)}`);
    this.notify('initialized');
  }

  async replyFor(id: string | number): Promise<Reply> {
    for (;;) {
      const index = this.replies.findIndex((reply) => reply.id === id);
      if (index !== -1) return this.replies.splice(index, 1)[0] as Reply;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Waits until `count` replies have arrived in total, and returns them without consuming. */
  async waitForReplies(count: number): Promise<Reply[]> {
    while (this.rawLines.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.rawLines.slice(0, count).map((line) => JSON.parse(line) as Reply);
  }

  end(): Promise<void> {
    this.input.end();
    return this.done;
  }
}

export function makeServer(options: Partial<ServerOptions> & { broker?: ServerBroker } = {}): {
  server: FsRpcServer;
  broker: FakeBroker;
} {
  const broker = (options.broker as FakeBroker | undefined) ?? new FakeBroker();
  const server = createServer({
    environment: {
      executor: 'fs-sandbox',
      executorVersion: '0.0.0-test',
      cwd: 'file:///w',
      userHomeDir: 'file:///home/test',
      platformOs: 'linux',
      temporaryDirectories: ['file:///tmp'],
      tempDir: 'file:///tmp',
      shell: { name: 'sh', path: '/bin/sh' },
      capabilities: {
        sandboxedFileStreaming: true,
        fileWriteStreaming: true,
        writeFileModes: true,
        errorKinds: true,
        processes: true,
        processTty: true,
      },
    },
    ...options,
    broker,
  });
  return { server, broker };
}

export async function readyClient(options: Partial<ServerOptions> = {}) {
  const { server, broker } = makeServer(options);
  const client = new StdioClient(server);
  await client.handshake();
  return { server, broker, client };
}
