import {
  FsError,
  isFsError,
  LIMITS,
  type ParsedParams,
  type ResultOf,
  type SandboxContextInput,
} from '@fs-sandbox/policy';
import type { ServerBroker } from './server-broker.js';

/** What a handle is opened with: the path and context as the client sent them (already validated). */
export interface OpenHandleParams {
  handleId: string;
  path: string;
  mode: 'read' | 'replace';
  sandbox: SandboxContextInput | null;
}

interface HandleBase {
  readonly id: string;
  readonly path: string;
  /** The context the handle was opened with; every block runs under it again. */
  readonly sandbox: SandboxContextInput | null;
  readonly sandboxed: boolean;
}

export interface ReadHandle extends HandleBase {
  readonly mode: 'read';
  /** What fs/openForRead reported about the file: every block read checks it is still that file. */
  readonly identity: { dev: string; ino: string };
}

export interface WriteHandle extends HandleBase {
  readonly mode: 'replace';
  /** The staging file fs/stageWrite made beside the target: the blocks go there until fs/close. */
  readonly staged: ResultOf<'fs/stageWrite'>['staged'];
}

/** A handle as a client holds it: its id names one of these for the connection's lifetime. */
export type ClientHandle = ReadHandle | WriteHandle;

type BlockResult = ResultOf<'fs/readRange'>;

/** The reference's answer to a block read on a write handle and a block write on a read handle. */
function wrongHandleKind(): FsError {
  return new FsError('io_error', 'Bad file descriptor (os error 9)');
}

/**
 * The file handles of one connection (fs/open, fs/readBlock, fs/writeBlock, fs/close). A handle
 * holds no file descriptor: it remembers the path, the sandbox context and what its open learned,
 * and each block is one helper run under that same context, so a sandboxed handle can never turn
 * into an unsandboxed read or write.
 *
 * - A read handle remembers the file's identity: a file swapped after open is refused, not read.
 * - A write handle remembers its staging file: blocks are written there, and fs/close publishes it
 *   over the target in one rename, so readers see the old file or the whole new one, never a half
 *   (the reference truncates the target at open and writes it in place). A handle that is not
 *   closed (its connection closed, a block failed) has its staging file removed and the target
 *   left as it was.
 */
export class FileHandleManager {
  private readonly handles = new Map<string, ClientHandle>();
  /**
   * Write handles whose block failed, by id, until the client closes them: the close then says
   * that nothing was published, rather than the `{}` of an unknown handle. Bounded like the handles.
   */
  private readonly failed = new Map<string, FsError>();
  /** Ids whose fs/open is still running: they count against the limit and block duplicates. */
  private readonly opening = new Set<string>();
  private closed = false;

  constructor(
    private readonly broker: ServerBroker,
    private readonly maxHandles: number = LIMITS.maxOpenHandlesPerConnection,
  ) {}

  get openCount(): number {
    return this.handles.size;
  }

  get(handleId: string): ClientHandle | undefined {
    return this.handles.get(handleId);
  }

  async open(params: OpenHandleParams, signal: AbortSignal): Promise<ClientHandle> {
    const id = params.handleId;
    if (this.handles.has(id) || this.opening.has(id)) {
      throw new FsError('invalid_request', `file handle \`${id}\` already exists`);
    }
    if (this.handles.size + this.opening.size >= this.maxHandles) {
      throw new FsError(
        'invalid_request',
        `at most ${this.maxHandles} file handles may be open per connection`,
      );
    }
    this.opening.add(id);
    this.failed.delete(id);
    try {
      const handle = await this.openHandle(params, signal);
      // The connection may have closed while the broker was opening: never resurrect a handle then.
      if (this.closed) {
        void this.abandon(handle);
        throw new FsError('internal_error', 'connection closed while opening the file');
      }
      this.handles.set(id, handle);
      return handle;
    } finally {
      this.opening.delete(id);
    }
  }

  private async openHandle(params: OpenHandleParams, signal: AbortSignal): Promise<ClientHandle> {
    const base = { id: params.handleId, path: params.path, sandbox: params.sandbox };
    const target = { path: params.path, sandbox: params.sandbox };
    if (params.mode === 'replace') {
      const { result, info } = await this.broker.callWithInfo('fs/stageWrite', target, { signal });
      return { ...base, mode: 'replace', staged: result.staged, sandboxed: info.sandboxed };
    }
    const { result, info } = await this.broker.callWithInfo('fs/openForRead', target, { signal });
    return {
      ...base,
      mode: 'read',
      identity: { dev: result.dev, ino: result.ino },
      sandboxed: info.sandboxed,
    };
  }

  async read(
    params: ParsedParams<'fs/readBlock'>,
    signal: AbortSignal,
  ): Promise<{ handle: ReadHandle; block: BlockResult }> {
    const handle = this.existing(params.handleId);
    if (handle.mode !== 'read') throw wrongHandleKind();
    try {
      const { result } = await this.broker.callWithInfo(
        'fs/readRange',
        {
          path: handle.path,
          offset: params.offset,
          len: params.len,
          identity: handle.identity,
          sandbox: handle.sandbox,
        },
        { signal },
      );
      return { handle, block: result };
    } catch (error) {
      // A failed read (file swapped, removed, helper died) leaves the handle unusable.
      this.forget(handle);
      throw error;
    }
  }

  /** `chunk` is the client's base64, decoded once by the broker on its way to the helper. */
  async write(
    params: { handleId: string; offset: number; chunk: string },
    signal: AbortSignal,
  ): Promise<WriteHandle> {
    const handle = this.existing(params.handleId);
    if (handle.mode !== 'replace') throw wrongHandleKind();
    try {
      await this.broker.callWithInfo(
        'fs/writeRange',
        {
          path: handle.path,
          staged: handle.staged,
          offset: params.offset,
          chunk: params.chunk,
          sandbox: handle.sandbox,
        },
        { signal },
      );
      return handle;
    } catch (error) {
      // A block that may or may not have landed leaves content nobody can vouch for: the handle is
      // gone, and so is its staging file; the target was never touched.
      if (this.forget(handle)) {
        this.rememberFailure(handle.id, error);
        await this.abandon(handle);
      }
      throw error;
    }
  }

  /**
   * Idempotent, like the reference: closing an unknown or already-closed handle succeeds. Closing a
   * write handle publishes its file; if that fails the reply says so and the target is unchanged.
   */
  async close(handleId: string, signal: AbortSignal): Promise<ClientHandle | undefined> {
    const failure = this.failed.get(handleId);
    if (failure !== undefined) {
      this.failed.delete(handleId);
      throw failure;
    }
    const handle = this.handles.get(handleId);
    if (handle === undefined) return undefined;
    this.handles.delete(handleId);
    if (handle.mode === 'replace') {
      const staged = { path: handle.path, staged: handle.staged, sandbox: handle.sandbox };
      try {
        await this.broker.callWithInfo('fs/publishStaged', staged, { signal });
      } catch (error) {
        await this.abandon(handle);
        throw error;
      }
    }
    return handle;
  }

  /**
   * The connection is gone: every handle is dropped, and no write handle is published. Settles when
   * the staging files are removed (it never rejects).
   */
  async closeAll(): Promise<void> {
    this.closed = true;
    this.failed.clear();
    const handles = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(handles.map((handle) => this.abandon(handle)));
  }

  private existing(handleId: string): ClientHandle {
    const failure = this.failed.get(handleId);
    if (failure !== undefined) throw failure;
    const handle = this.handles.get(handleId);
    if (!handle) throw new FsError('not_found', `unknown file handle \`${handleId}\``);
    return handle;
  }

  private rememberFailure(handleId: string, error: unknown): void {
    const cause = isFsError(error) ? `${error.message} [${error.kind}]` : String(error);
    this.failed.set(
      handleId,
      new FsError(
        'io_error',
        `write handle \`${handleId}\` failed at an earlier block (${cause}); nothing was published`,
      ),
    );
    // The oldest failures are forgotten first: at most as many as there may be open handles.
    if (this.failed.size > this.maxHandles) this.failed.delete(this.failed.keys().next().value as string);
  }

  /** Drops a handle unless the client already closed it and reused the id; true if it was dropped. */
  private forget(handle: ClientHandle): boolean {
    if (this.handles.get(handle.id) !== handle) return false;
    this.handles.delete(handle.id);
    return true;
  }

  /**
   * Removes a write handle's staging file. If that fails too (the broker closed meanwhile), the file
   * stays: a hidden `.fs-sandbox-*.tmp` beside the target, which was never changed.
   */
  private async abandon(handle: ClientHandle): Promise<void> {
    if (handle.mode !== 'replace') return;
    const staged = { path: handle.path, staged: handle.staged, sandbox: handle.sandbox };
    await this.broker.callWithInfo('fs/discardStaged', staged).catch(() => undefined);
  }
}
