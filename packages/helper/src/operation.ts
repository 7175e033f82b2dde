import type { HelperMethod, HelperParamsOf, HelperResultOf } from '@fs-sandbox/policy';
import type { HostOs, PathGuard } from '@fs-sandbox/policy/core';
import type { ReplyBinary } from './protocol.js';
import type { ProgressSink } from './tree-progress-counter.js';

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
  /** The ripgrep executable (absolute path) from the request, or null when the broker sent none. */
  ripgrep: string | null;
  /** Where a long tree operation reports its progress (null: nobody asked). */
  progress: ProgressSink | null;
}

export interface OperationOutcome<M extends HelperMethod> {
  response: HelperResultOf<M>;
  binary?: ReplyBinary;
}

/**
 * One helper operation of the method table. `parse` checks the params with light hand-written
 * checks (the helper's start-up path must not load zod): the broker has validated them fully, but
 * the helper never acts on a value of the wrong type, whoever sent it. Every param is checked
 * before `run` touches the disk.
 */
export interface Operation<M extends HelperMethod> {
  parse(raw: Record<string, unknown>, os: HostOs): HelperParamsOf<M>;
  run(params: HelperParamsOf<M>, context: OperationContext): Promise<OperationOutcome<M>>;
}
