import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import { runRequest } from '../src/run-request.js';
import { tempDir, writableGuard } from './support/helper-run.js';

/** One slot of a batch's results, as the tests read it. */
type Slot = {
  result?: { dataBase64?: string; isFile?: boolean };
  error?: { code: number; message: string; data: { errorKind: string } };
};

/** A batch as the broker sends it: native paths, bytes params as `{base64}`. */
async function batch(
  operations: Array<{ method: string; params: Record<string, unknown> }>,
  guardRoot?: string,
) {
  const reply = await runRequest({
    operation: 'fs/batch',
    params: { operations },
    ...(guardRoot === undefined ? {} : { sandboxed: true, guard: writableGuard(guardRoot) }),
  });
  if (reply.status !== 'ok') throw new Error(JSON.stringify(reply.payload));
  return (reply.payload.response as { results: Slot[] }).results;
}

describe('fs/batch (helper)', () => {
  it('answers every operation on its own, in order, file bytes as base64', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a'), 'A');
    writeFileSync(join(dir, 'b'), Buffer.from([0, 255]));
    const results = await batch([
      { method: 'fs/readFile', params: { path: join(dir, 'a') } },
      { method: 'fs/readFile', params: { path: join(dir, 'missing') } },
      { method: 'fs/readFile', params: { path: join(dir, 'b') } },
      { method: 'fs/getMetadata', params: { path: join(dir, 'a') } },
    ]);
    expect(results[0]).toEqual({ result: { dataBase64: 'QQ==' } });
    expect(results[1]?.error?.data.errorKind).toBe('not_found');
    expect(results[1]?.error?.code).toBe(-32004);
    expect(results[2]).toEqual({ result: { dataBase64: 'AP8=' } });
    expect(results[3]?.result?.isFile).toBe(true);
  });

  it('writes bytes params sent as {base64}, under the guard', async () => {
    const dir = tempDir();
    const results = await batch(
      [
        {
          method: 'fs/writeFile',
          params: { path: join(dir, 'w'), dataBase64: { base64: 'aGk=' }, mode: 'overwrite' },
        },
        {
          method: 'fs/writeFile',
          params: { path: '/etc/fs-sandbox-batch', dataBase64: { base64: 'aGk=' }, mode: 'overwrite' },
        },
      ],
      dir,
    );
    expect(results[0]).toEqual({ result: {} });
    expect(readFileSync(join(dir, 'w'), 'utf8')).toBe('hi');
    expect(results[1]?.error?.data.errorKind).toBe('permission_denied');
    expect(existsSync('/etc/fs-sandbox-batch')).toBe(false);
  });

  it('refuses a batch inside a batch and an unknown operation, each in its own slot', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a'), 'A');
    const results = await batch([
      { method: 'fs/batch', params: { operations: [] } },
      { method: 'fs/nothing', params: {} },
      { method: 'fs/readFile', params: { path: join(dir, 'a') } },
    ]);
    expect(results[0]?.error?.data.errorKind).toBe('invalid_params');
    expect(results[1]?.error?.data.errorKind).toBe('invalid_request');
    expect(results[2]).toEqual({ result: { dataBase64: 'QQ==' } });
  });

  it('refuses more operations than the limit as a whole', async () => {
    const operations = Array.from({ length: LIMITS.batchMaxOperations + 1 }, () => ({
      method: 'fs/readFile',
      params: { path: '/x' },
    }));
    const reply = await runRequest({ operation: 'fs/batch', params: { operations } });
    expect(reply.status).toBe('error');
    if (reply.status === 'error') expect(reply.payload.data.errorKind).toBe('invalid_params');
  });
});
