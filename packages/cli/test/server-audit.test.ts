import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsError } from '@fs-sandbox/policy';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AuditRecord, FileAuditLog } from '../src/server/audit-log.js';
import { FakeBroker, readyClient } from './support/fake-server.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-audit-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function records(file: string): Promise<AuditRecord[]> {
  const text = await readFile(file, 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditRecord);
}

const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('audit log', () => {
  it('writes one line per operation with hashed paths, outcome, kind, bytes and duration, never contents', async () => {
    const file = join(dir, 'audit.jsonl');
    const audit = await FileAuditLog.open(file, { rawPaths: false });
    const { client, broker } = await readyClient({ audit });
    const secret = 'sk-live-SECRET-4f9a1c2e8b7d';
    const path = 'file:///w/.env';
    broker.sandboxed = true;
    await client.request('fs/writeFile', {
      path,
      dataBase64: Buffer.from(secret).toString('base64'),
      sandbox: null,
    });
    await client.request('fs/readFile', { path, sandbox: null });
    await client.request('fs/getMetadata', { path: 'file:///w/missing' });
    await client.request('fs/open', { handleId: 'h', path });
    await client.request('fs/readBlock', { handleId: 'h', offset: 0, len: 4 });
    await client.request('fs/close', { handleId: 'h' });
    await client.request('fs/nope', {});
    await client.end();
    await audit.close();

    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    expect(text).not.toContain(Buffer.from(secret.slice(0, 4)).toString('base64'));
    expect(text).not.toContain('/w/');

    const lines = await records(file);
    expect(lines.map((line) => line.method)).toEqual([
      'fs/writeFile',
      'fs/readFile',
      'fs/getMetadata',
      'fs/open',
      'fs/readBlock',
      'fs/close',
      'fs/nope',
    ]);
    expect(lines[0]).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      connection: 'c1',
      method: 'fs/writeFile',
      paths: [sha(path)],
      sandboxed: true,
      outcome: 'ok',
      errorKind: null,
      bytesRead: 0,
      bytesWritten: secret.length,
      durationMs: expect.any(Number),
    });
    expect(lines[1]).toMatchObject({ outcome: 'ok', bytesRead: secret.length, bytesWritten: 0 });
    expect(lines[2]).toMatchObject({
      outcome: 'error',
      errorKind: 'not_found',
      paths: [sha('file:///w/missing')],
    });
    expect(lines[4]).toMatchObject({ paths: [sha(path)], sandboxed: true, bytesRead: 4 });
    expect(lines[5]).toMatchObject({ paths: [sha(path)], outcome: 'ok' });
    expect(lines[6]).toMatchObject({
      paths: [],
      sandboxed: null,
      outcome: 'error',
      errorKind: 'invalid_request',
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('records raw paths when asked, and policy refusals as denied', async () => {
    const file = join(dir, 'audit.jsonl');
    const audit = await FileAuditLog.open(file, { rawPaths: true });
    const broker = new FakeBroker();
    const denying = Object.assign(broker, {
      callWithInfo: async () => {
        throw new FsError('permission_denied', 'outside writable roots');
      },
    });
    const { client } = await readyClient({ audit, broker: denying });
    await client.request('fs/copy', {
      sourcePath: 'file:///a',
      destinationPath: 'file:///b',
      recursive: false,
    });
    await client.end();
    await audit.close();
    expect(await records(file)).toEqual([
      expect.objectContaining({
        method: 'fs/copy',
        paths: ['file:///a', 'file:///b'],
        outcome: 'denied',
        errorKind: 'permission_denied',
      }),
    ]);
  });

  it("records an fs/applyPatch's cwd and the files its patch touches, also when it fails", async () => {
    const file = join(dir, 'audit.jsonl');
    const audit = await FileAuditLog.open(file, { rawPaths: true });
    const broker = Object.assign(new FakeBroker(), {
      callWithInfo: async () => {
        throw new FsError('patch_conflict', 'Failed to find expected lines in /w/b.txt');
      },
    });
    const { client } = await readyClient({ audit, broker });
    const patch = [
      '*** Begin Patch',
      '*** Add File: a.txt',
      '+new',
      '*** Update File: b.txt',
      '*** Move to: sub/c.txt',
      '@@',
      '-old',
      '+new',
      '*** Delete File: d.txt',
      '*** End Patch',
    ].join('\n');
    await client.request('fs/applyPatch', { patch, cwd: 'file:///w' });
    await client.end();
    await audit.close();
    expect(await records(file)).toEqual([
      expect.objectContaining({
        method: 'fs/applyPatch',
        paths: ['file:///w', 'file:///w/a.txt', 'file:///w/b.txt', 'file:///w/sub/c.txt', 'file:///w/d.txt'],
        outcome: 'error',
        errorKind: 'patch_conflict',
      }),
    ]);
  });

  it('refuses operations once the audit log cannot be written (fail closed)', async () => {
    const audit = await FileAuditLog.open('/dev/full', { rawPaths: false });
    const { client, broker } = await readyClient({ audit });
    broker.files.set('file:///w/a', Buffer.from('a'));
    await client.request('fs/readFile', { path: 'file:///w/a' });
    // The record's write fails after the reply: wait for it (polled, not a fixed pause).
    await vi.waitFor(() => expect(audit.failure).not.toBeNull(), { timeout: 10_000, interval: 5 });
    const reply = await client.request('fs/readFile', { path: 'file:///w/a' });
    expect(reply.error).toMatchObject({ code: -32603, data: { errorKind: 'io_error' } });
    expect(reply.error?.message).toMatch(/^audit log is unavailable: /);
    expect(broker.calls).toHaveLength(1);
    await client.end();
    await audit.close();
  });
});
