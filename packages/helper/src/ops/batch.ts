import type { BatchOutcome } from '@fs-sandbox/policy';
import { FsError, LIMITS, toWireError } from '@fs-sandbox/policy/core';
import type { Operation, OperationContext } from '../operation.js';
import { isPlainObject } from '../params.js';
import type { HelperReply } from '../protocol.js';

/** Runs one operation of the batch and never throws (run-request.ts's dispatch). */
export type PerformOne = (
  operation: string,
  params: Record<string, unknown>,
  context: OperationContext,
) => Promise<HelperReply>;

interface BatchOperation {
  method: string;
  params: Record<string, unknown>;
}

/**
 * fs/batch inside the helper: the operations run one after another in this one process, each
 * answered on its own. Binary framing carries one field per message, so inside a batch file bytes
 * travel as base64 both ways: a param's bytes as `{base64}` (the broker's encoding), a result's in
 * its field, as on the JSON-RPC wire. The results together are bounded by LIMITS.batchMaxReplyBytes.
 */
export function batchOperation(performOne: PerformOne): Operation<'fs/batch'> {
  return {
    parse: (raw) => ({ operations: batchOperations(raw.operations) }),
    async run({ operations }, context) {
      const results: BatchOutcome[] = [];
      let replyBytes = 0;
      for (const [index, operation] of operations.entries()) {
        let outcome = await runOne(operation, index, performOne, context);
        const bytes = JSON.stringify(outcome).length;
        if (replyBytes + bytes > LIMITS.batchMaxReplyBytes) {
          outcome = failed(
            new FsError(
              'file_too_large',
              `operation ${index} of fs/batch (${operation.method}) would make the batch's reply larger than ${LIMITS.batchMaxReplyBytes} bytes; send it on its own`,
            ),
          );
        }
        replyBytes += JSON.stringify(outcome).length;
        results.push(outcome);
      }
      return { response: { results } };
    },
  };
}

async function runOne(
  operation: BatchOperation,
  index: number,
  performOne: PerformOne,
  context: OperationContext,
): Promise<BatchOutcome> {
  if (operation.method === 'fs/batch') {
    return failed(new FsError('invalid_params', `operation ${index} of fs/batch cannot be another fs/batch`));
  }
  let params: Record<string, unknown>;
  try {
    params = withBytes(operation.params);
  } catch (error) {
    return failed(error);
  }
  const reply = await performOne(operation.method, params, context);
  if (reply.status === 'error') return { error: reply.payload };
  const result = { ...(reply.payload.response as Record<string, unknown>) };
  if (reply.binary !== undefined) result[reply.binary.field] = reply.binary.data.toString('base64');
  return { result };
}

function failed(error: unknown): BatchOutcome {
  return { error: toWireError(error) };
}

/** `{base64}` values (the broker's encoding of a bytes param inside a batch) back to bytes. */
function withBytes(params: Record<string, unknown>): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(params)) {
    const isBytes =
      isPlainObject(value) && Object.keys(value).length === 1 && typeof value.base64 === 'string';
    decoded[field] = isBytes ? Buffer.from(value.base64 as string, 'base64') : value;
  }
  return decoded;
}

function batchOperations(value: unknown): BatchOperation[] {
  if (!Array.isArray(value)) {
    throw new FsError('invalid_params', 'invalid type for `operations`: expected an array');
  }
  if (value.length > LIMITS.batchMaxOperations) {
    throw new FsError('invalid_params', `fs/batch takes at most ${LIMITS.batchMaxOperations} operations`);
  }
  return value.map((operation, index) => {
    if (
      !isPlainObject(operation) ||
      typeof operation.method !== 'string' ||
      !isPlainObject(operation.params)
    ) {
      throw new FsError(
        'invalid_params',
        `invalid value for \`operations[${index}]\`: expected {method: string, params: object}`,
      );
    }
    return { method: operation.method, params: operation.params };
  });
}
