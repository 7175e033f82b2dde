import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import {
  type BatchOutcome,
  carriesRequests,
  descriptorOf,
  FsError,
  type HelperMethod,
  type HelperParamsOf,
  type HostOs,
  isExposedMethod,
  isHelperMethod,
  parseForHelper,
  type ResultOf,
  type TouchedPath,
  toWireError,
} from '@fs-sandbox/policy';

import { admitOperation } from './admission.js';
import type { Route } from './routing.js';

type HelperOperation = HelperParamsOf<'fs/batch'>['operations'][number];

interface PendingOperation {
  index: number;
  paths: TouchedPath[];
  operation: HelperOperation;
}

/**
 * The broker's side of fs/batch. Each operation is parsed against its own method's schema and
 * pre-checked on its own, exactly as a single call would be; one that fails gets that error in its
 * slot and is not sent, the others go to one helper. Bytes params travel as `{base64}` inside the
 * batch (see the helper's ops/batch.ts). The outcomes come back in the order the client sent.
 */
export class BatchPlan {
  private readonly outcomes: Array<BatchOutcome | undefined>;
  private pending: PendingOperation[] = [];

  constructor(operations: HelperParamsOf<'fs/batch'>['operations'], route: Route, os: HostOs) {
    this.outcomes = operations.map(() => undefined);
    for (const [index, { method, params }] of operations.entries()) {
      try {
        const planned = planOperation(index, method, params, os);
        // The method's own decision first, as alone (a patch's safety assessment): its answer,
        // such as `needs_approval`, is the slot's result and the operation is not sent.
        const answered = admitOperation(planned.method, planned.parsedParams, route, os);
        if (answered !== null) this.outcomes[index] = { result: answered as Record<string, unknown> };
        else this.pending.push({ index, paths: planned.paths, operation: planned.operation });
      } catch (error) {
        this.outcomes[index] = { error: toWireError(error) };
      }
    }
  }

  /** Runs `check` on each pending operation's paths; a refusal becomes that operation's answer. */
  refuse(check: (paths: readonly TouchedPath[]) => void): void {
    this.pending = this.pending.filter((pending) => {
      try {
        check(pending.paths);
        return true;
      } catch (error) {
        this.outcomes[pending.index] = { error: toWireError(error) };
        return false;
      }
    });
  }

  /** The helper request for what is still pending, or null when every operation is answered. */
  request(batch: HelperRequest<'fs/batch'>): HelperRequest<'fs/batch'> | null {
    if (this.pending.length === 0) return null;
    return { ...batch, params: { operations: this.pending.map((pending) => pending.operation) } };
  }

  /** Every outcome in order, the helper's reply (for the pending operations) merged in. */
  merged(reply: HelperReply | null): HelperReply {
    if (reply?.status === 'error') return reply;
    const results = reply === null ? [] : (reply.payload.response as ResultOf<'fs/batch'>).results;
    if (results.length !== this.pending.length) {
      throw new FsError(
        'helper_failed',
        `the helper answered ${results.length} operations of a batch that sent ${this.pending.length}`,
      );
    }
    for (const [position, pending] of this.pending.entries())
      this.outcomes[pending.index] = results[position];
    return {
      status: 'ok',
      payload: { operation: 'fs/batch', response: { results: this.outcomes as BatchOutcome[] } },
    };
  }
}

function planOperation(
  index: number,
  method: string,
  params: Record<string, unknown>,
  os: HostOs,
): { method: HelperMethod; paths: TouchedPath[]; operation: HelperOperation; parsedParams: unknown } {
  if (!isHelperMethod(method) || !isExposedMethod(method) || carriesRequests(method)) {
    throw new FsError(
      'invalid_params',
      `operation ${index} of fs/batch: \`${method}\` cannot run in a batch (it takes the exposed helper methods other than fs/batch)`,
    );
  }
  if (Object.hasOwn(params, 'sandbox')) {
    throw new FsError(
      'invalid_params',
      `operation ${index} of fs/batch carries its own \`sandbox\`; the batch's one sandbox applies to every operation`,
    );
  }
  const parsed = parseForHelper(method as HelperMethod, params, os);
  const binary = descriptorOf(method).binary?.params;
  const helperParams = { ...(parsed.params as Record<string, unknown>) };
  // The client's base64, which parsing has just found strict: passed on as sent, not re-encoded.
  if (binary !== undefined) helperParams[binary] = { base64: params[binary] as string };
  return {
    method,
    paths: parsed.paths,
    operation: { method, params: helperParams },
    parsedParams: parsed.params,
  };
}
