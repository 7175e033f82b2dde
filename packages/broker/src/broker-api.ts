import type { FsMethod } from '@fs-sandbox/policy';

export interface CallOptions {
  /** Aborting kills the helper's whole process tree and rejects with a `timeout`/`internal_error` FsError. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Outcome metadata the server's audit log records for each call. */
export interface CallInfo {
  sandboxed: boolean;
  backend: string | null;
}

/**
 * The broker as the CLI and the JSON-RPC server see it: one method call in, its result out, or an
 * FsError thrown (policy, helper and sandbox failures all arrive as FsError with a kind).
 */
export interface Broker {
  call(method: FsMethod, params: unknown, options?: CallOptions): Promise<unknown>;
  callWithInfo(
    method: FsMethod,
    params: unknown,
    options?: CallOptions,
  ): Promise<{ result: unknown; info: CallInfo }>;
  close(): Promise<void>;
}
