import {
  FsError,
  LIMITS,
  type ParsedParams,
  type ResultOf,
  type SandboxContextInput,
} from '@fs-sandbox/policy';
import type { ServerBroker } from './server-broker.js';

/** What a read handle is opened with: the path and context as the client sent them (already validated). */
export interface OpenHandleParams {
  handleId: string;
  path: string;
  sandbox: SandboxContextInput | null;
}

export interface ReadHandle {
  readonly id: string;
  readonly path: string;
  /** The context the handle was opened with; every block read runs under it again. */
  readonly sandbox: SandboxContextInput | null;
  /** What fs/openForRead reported about the file: every block read checks it is still that file. */
  readonly identity: { dev: string; ino: string };
  readonly sandboxed: boolean;
}

type BlockResult = ResultOf<'fs/readRange'>;

/**
 * The read handles of one connection (fs/open, fs/readBlock, fs/close). A handle holds no file
 * descriptor: it remembers the path, the sandbox context and the file's identity, and each block
 * is read by the broker's `fs/readRange` under that same context, so a sandboxed handle can never
 * turn into an unsandboxed read, and a file swapped after open is refused instead of read.
 */
export class ReadHandleManager {
  private readonly handles = new Map<string, ReadHandle>();
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

  get(handleId: string): ReadHandle | undefined {
    return this.handles.get(handleId);
  }

  async open(params: OpenHandleParams, signal: AbortSignal): Promise<ReadHandle> {
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
    try {
      const { result, info } = await this.broker.callWithInfo(
        'fs/openForRead',
        { path: params.path, sandbox: params.sandbox },
        { signal },
      );
      const handle: ReadHandle = {
        id,
        path: params.path,
        sandbox: params.sandbox,
        identity: { dev: result.dev, ino: result.ino },
        sandboxed: info.sandboxed,
      };
      // The connection may have closed while the broker was opening: never resurrect a handle then.
      if (this.closed) throw new FsError('internal_error', 'connection closed while opening the file');
      this.handles.set(id, handle);
      return handle;
    } finally {
      this.opening.delete(id);
    }
  }

  async read(
    params: ParsedParams<'fs/readBlock'>,
    signal: AbortSignal,
  ): Promise<{ handle: ReadHandle; block: BlockResult }> {
    const handle = this.handles.get(params.handleId);
    if (!handle) throw new FsError('not_found', `unknown file handle \`${params.handleId}\``);
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
      // A failed read (file swapped, removed, helper died) leaves the handle unusable; closing it
      // frees the slot, unless the client already closed it and reused the id for a new file.
      if (this.handles.get(handle.id) === handle) this.handles.delete(handle.id);
      throw error;
    }
  }

  /** Idempotent, like the reference: closing an unknown or already-closed handle succeeds. */
  close(handleId: string): ReadHandle | undefined {
    const handle = this.handles.get(handleId);
    this.handles.delete(handleId);
    return handle;
  }

  closeAll(): void {
    this.closed = true;
    this.handles.clear();
  }
}
