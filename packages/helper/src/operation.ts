import type { HostOs, PathGuard } from '@fs-sandbox/policy/core';
import type { ReplyBinary } from './protocol.js';

/** What every operation knows about the run besides its params. */
export interface OperationContext {
  os: HostOs;
  /**
   * The request runs under a restricted sandbox context: the helper then never writes through a
   * symlink leaf (the link could point at a file the sandbox makes visible but the policy did not
   * mean to be written through that name).
   */
  sandboxed: boolean;
  /**
   * The request's write rules, checked against the physical location of every path the operation
   * creates, replaces or removes (null in-process, where no policy restricts anything).
   */
  guard: PathGuard | null;
}

export interface OperationOutcome {
  response: Record<string, unknown>;
  binary?: ReplyBinary;
}

/** One helper operation: validates its own params (light hand-written checks) and performs itself. */
export interface Operation {
  run(params: Record<string, unknown>, context: OperationContext): Promise<OperationOutcome>;
}
