import {
  type ExposedMethod,
  type HelperMethod,
  isExposedMethod,
  isHelperMethod,
  METHODS,
  type ParamsIn,
  type ResultOf,
  type TreeProgress,
} from '@fs-sandbox/policy';

export interface CallOptions {
  /** Aborting kills the helper's whole process tree and rejects with an `internal_error` FsError. */
  signal?: AbortSignal;
  /** Past this the helper is killed the same way and the call rejects with `timeout`. */
  timeoutMs?: number;
  /**
   * Told how far a long tree operation (a recursive fs/copy or fs/remove, a move across file
   * systems) got: entries `checked` before it starts, then entries `done`, a few times a second.
   */
  onProgress?: (progress: TreeProgress) => void;
}

/** Outcome metadata the server's audit log records for each call. */
export interface CallInfo {
  sandboxed: boolean;
  backend: string | null;
}

/** The filesystem methods a client may call through the broker (the method table's exposed helper methods). */
export type FsMethod = Extract<HelperMethod, ExposedMethod>;

export function isFsMethod(name: string): name is FsMethod {
  return isHelperMethod(name) && isExposedMethod(name);
}

/** The methods `fs-sandbox call` accepts, in table order. */
export const FS_METHODS: readonly FsMethod[] = METHODS.filter(isFsMethod);

/**
 * The broker as the CLI and the JSON-RPC server see it: one method call in, its typed result out,
 * or an FsError thrown (policy, helper and sandbox failures all arrive as FsError with a kind).
 * File bytes in results (`fs/readFile`'s `dataBase64`) are Buffers.
 */
export interface Broker {
  call<M extends FsMethod>(method: M, params: ParamsIn<M>, options?: CallOptions): Promise<ResultOf<M>>;
  /**
   * `call` for params that arrive untyped (a JSON-RPC request, a CLI argument): they are validated
   * against the method's schema exactly as `call`'s are. The info says where the request ran.
   */
  callWithInfo<M extends FsMethod>(
    method: M,
    params: unknown,
    options?: CallOptions,
  ): Promise<{ result: ResultOf<M>; info: CallInfo }>;
  /**
   * fs/explainAccess, answered by the broker without a helper: the access `sandbox` gives `path`
   * (as enforcement would decide it, this broker's trust gate included) and the rule that decided.
   */
  explainAccess(params: ParamsIn<'fs/explainAccess'>): Promise<ResultOf<'fs/explainAccess'>>;
  close(): Promise<void>;
}
