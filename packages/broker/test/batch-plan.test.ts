import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsError, nativeToPathUri } from '@fs-sandbox/policy';
import { afterEach, describe, expect, it } from 'vitest';
import { createBroker } from '../src/broker.js';
import { BatchPlan } from '../src/core/batch-plan.js';
import type { Route } from '../src/core/routing.js';
import { tempScopesOf } from '../src/runner/temp-cleanup.js';

/** One slot of a batch's results, as the tests read it. */
type Slot = {
  result?: { dataBase64?: string; isFile?: boolean };
  error?: { code: number; message: string; data: { errorKind: string } };
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fs-batch-'));
  dirs.push(dir);
  return dir;
}
const uri = (path: string) => nativeToPathUri(path, 'linux');
const batchRequest = { operation: 'fs/batch' as const, params: { operations: [] } };
const UNSANDBOXED: Route = { kind: 'in-process', reason: 'absent' };

describe('BatchPlan', () => {
  it('parses each operation against its own method, answering the bad ones in their slots', () => {
    const plan = new BatchPlan(
      [
        { method: 'fs/readFile', params: { path: 'file:///w/a' } },
        { method: 'fs/readFile', params: { path: 'file:///w/a', sandbox: null } },
        { method: 'fs/readRange', params: { path: 'file:///w/a', offset: 0, len: 1 } },
        { method: 'fs/batch', params: { operations: [] } },
        { method: 'fs/open', params: { handleId: 'h', path: 'file:///w/a' } },
        { method: 'fs/readFile', params: { pth: 'file:///w/a' } },
        { method: 'fs/writeFile', params: { path: 'file:///w/b', dataBase64: 'aGk=' } },
      ],
      UNSANDBOXED,
      'linux',
    );
    const request = plan.request(batchRequest);
    expect(request?.params.operations).toEqual([
      { method: 'fs/readFile', params: { path: '/w/a' } },
      { method: 'fs/writeFile', params: { path: '/w/b', dataBase64: { base64: 'aGk=' }, mode: 'overwrite' } },
    ]);
    const reply = plan.merged({
      status: 'ok',
      payload: {
        operation: 'fs/batch',
        response: { results: [{ result: { dataBase64: '' } }, { result: {} }] },
      },
    });
    if (reply.status !== 'ok') throw new Error('expected ok');
    const results = (reply.payload.response as { results: Slot[] }).results;
    expect(results.map((outcome) => outcome.error?.data.errorKind ?? 'ok')).toEqual([
      'ok',
      'invalid_params',
      'invalid_params',
      'invalid_params',
      'invalid_params',
      'invalid_params',
      'ok',
    ]);
    expect(results[1]?.error?.message).toContain('its own `sandbox`');
    expect(results[5]?.error?.message).toContain('pth');
  });

  it('turns a refusal of one operation into its answer and sends only the others', () => {
    const plan = new BatchPlan(
      [
        { method: 'fs/readFile', params: { path: 'file:///w/a' } },
        { method: 'fs/remove', params: { path: 'file:///etc/x' } },
      ],
      UNSANDBOXED,
      'linux',
    );
    plan.refuse((paths) => {
      if (paths.some((path) => path.path.startsWith('/etc')))
        throw new FsError('permission_denied', 'outside writable roots');
    });
    expect(plan.request(batchRequest)?.params.operations).toHaveLength(1);
    plan.refuse(() => {
      throw new FsError('permission_denied', 'no');
    });
    expect(plan.request(batchRequest)).toBeNull();
    const reply = plan.merged(null);
    if (reply.status !== 'ok') throw new Error('expected ok');
    expect((reply.payload.response as { results: unknown[] }).results).toHaveLength(2);
  });

  it('cleans temporary files where each write of the batch could have left them', () => {
    const plan = new BatchPlan(
      [
        { method: 'fs/writeFile', params: { path: 'file:///w/a/f', dataBase64: '' } },
        { method: 'fs/readFile', params: { path: 'file:///r/x' } },
        { method: 'fs/rename', params: { sourcePath: 'file:///w/s', destinationPath: 'file:///w/d' } },
      ],
      UNSANDBOXED,
      'linux',
    );
    const request = plan.request(batchRequest);
    if (request === null) throw new Error('expected a request');
    expect(tempScopesOf(request, 'linux')).toEqual([
      { path: '/w/a', recursive: false },
      { path: '/w', recursive: false },
      { path: '/w/d', recursive: true },
    ]);
  });
});

describe('fs/batch and the trust gate through the broker (in-process)', () => {
  it('reads and writes in one call, each operation answered on its own', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a'), 'A');
    const broker = createBroker({ pool: false });
    try {
      const { results } = await broker.call('fs/batch', {
        operations: [
          { method: 'fs/readFile', params: { path: uri(join(dir, 'a')) } },
          { method: 'fs/writeFile', params: { path: uri(join(dir, 'b')), dataBase64: 'Qg==' } },
          { method: 'fs/readFile', params: { path: uri(join(dir, 'none')) } },
        ],
      });
      expect(results[0]).toEqual({ result: { dataBase64: 'QQ==' } });
      expect(results[1]).toEqual({ result: {} });
      expect(results[2]).toMatchObject({ error: { data: { errorKind: 'not_found' } } });
      expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('B');
    } finally {
      await broker.close();
    }
  });

  it('admits a patch inside a batch exactly as alone: its approval answer fills its slot and nothing is written', async () => {
    const dir = tempDir();
    const broker = createBroker({ pool: false });
    const patch = (name: string) => `*** Begin Patch\n*** Add File: ${join(dir, name)}\n+x\n*** End Patch`;
    const asked = (name: string) => ({
      patch: patch(name),
      cwd: uri(dir),
      approvalPolicy: 'unless-trusted' as const,
    });
    try {
      const alone = await broker.call('fs/applyPatch', asked('alone'));
      expect(alone).toMatchObject({ status: 'needs_approval' });
      const { results } = await broker.call('fs/batch', {
        operations: [
          { method: 'fs/applyPatch', params: asked('batched') },
          { method: 'fs/writeFile', params: { path: uri(join(dir, 'written')), dataBase64: 'Qg==' } },
        ],
      });
      expect(alone.changes).toEqual([{ kind: 'add', path: join(dir, 'alone') }]);
      expect(results[0]).toEqual({
        result: { ...alone, changes: [{ kind: 'add', path: join(dir, 'batched') }] },
      });
      expect(results[1]).toEqual({ result: {} });
      expect(readdirSync(dir).sort()).toEqual(['written']);
    } finally {
      await broker.close();
    }
  });

  it('an untrusted broker refuses every write-class method and batches holding one, but reads', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a'), 'A');
    const broker = createBroker({ pool: false, trusted: false });
    try {
      const refused = [
        broker.call('fs/writeFile', { path: uri(join(dir, 'w')), dataBase64: '' }),
        broker.call('fs/remove', { path: uri(join(dir, 'a')) }),
        broker.call('fs/createDirectory', { path: uri(join(dir, 'd')) }),
        broker.call('fs/copy', {
          sourcePath: uri(join(dir, 'a')),
          destinationPath: uri(join(dir, 'c')),
          recursive: false,
        }),
        broker.call('fs/rename', { sourcePath: uri(join(dir, 'a')), destinationPath: uri(join(dir, 'r')) }),
        broker.call('fs/batch', {
          operations: [
            { method: 'fs/readFile', params: { path: uri(join(dir, 'a')) } },
            { method: 'fs/remove', params: { path: uri(join(dir, 'a')) } },
          ],
        }),
      ];
      for (const call of refused) {
        await expect(call).rejects.toMatchObject({ kind: 'untrusted_workspace', code: -32600 });
      }
      expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('A');
      expect((await broker.call('fs/readFile', { path: uri(join(dir, 'a')) })).dataBase64.toString()).toBe(
        'A',
      );
      const explained = await broker.explainAccess({ path: uri(join(dir, 'a')) });
      expect(explained).toMatchObject({ access: 'read' });
      expect(explained.reason).toContain('untrusted');
    } finally {
      await broker.close();
    }
  });
});
