import { lstatSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRequest } from '../src/run-request.js';
import { symlinkAt, tempDir, writableGuard } from './support/helper-run.js';

function freshnessOf(path: string) {
  const stats = lstatSync(path, { bigint: true });
  return { path, dev: stats.dev.toString(), ino: stats.ino.toString() };
}

describe('runRequest', () => {
  it('never throws: a malformed request becomes an invalid_request reply', async () => {
    for (const request of [
      null,
      'x',
      [],
      { params: {} },
      { operation: 'fs/readFile' },
      { operation: 'fs/readFile', params: [] },
    ]) {
      const reply = await runRequest(request);
      expect(reply.status).toBe('error');
      if (reply.status === 'error') expect(reply.payload.data.errorKind).toBe('invalid_request');
    }
  });

  it('refuses an unknown operation', async () => {
    const reply = await runRequest({ operation: 'fs/move', params: {} });
    expect(reply).toEqual({
      status: 'error',
      payload: {
        code: -32600,
        message: 'unknown helper operation `fs/move`',
        data: { errorKind: 'invalid_request' },
      },
    });
  });

  it('answers like the reference on success', async () => {
    const dir = tempDir();
    const reply = await runRequest({
      operation: 'fs/createDirectory',
      params: { path: join(dir, 'a'), recursive: true },
    });
    expect(reply).toEqual({ status: 'ok', payload: { operation: 'fs/createDirectory', response: {} } });
  });

  describe('freshness', () => {
    it('acts when every root is still the same file', async () => {
      const dir = tempDir();
      const reply = await runRequest({
        operation: 'fs/writeFile',
        params: { path: join(dir, 'f'), dataBase64: Buffer.from('x'), mode: 'overwrite' },
        freshness: [freshnessOf(dir)],
      });
      expect(reply.status).toBe('ok');
    });

    it('refuses (stale, helper_failed) without touching anything when a root was replaced', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'root'));
      const before = freshnessOf(join(dir, 'root'));
      renameSync(join(dir, 'root'), join(dir, 'old-root'));
      mkdirSync(join(dir, 'root'));
      const reply = await runRequest({
        operation: 'fs/writeFile',
        params: { path: join(dir, 'root', 'f'), dataBase64: Buffer.from('x'), mode: 'overwrite' },
        freshness: [before],
      });
      expect(reply).toEqual({
        status: 'error',
        payload: {
          code: -32603,
          message: `sandbox view is stale: ${join(dir, 'root')} changed since the helper started`,
          data: { errorKind: 'helper_failed', stale: true },
        },
      });
      expect(readdirSync(join(dir, 'root'))).toEqual([]);
    });

    it('treats a root that vanished, or became a symlink to the same directory, as stale', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'real'));
      const real = freshnessOf(join(dir, 'real'));
      symlinkAt('real', join(dir, 'alias'));
      for (const entry of [
        { ...real, path: join(dir, 'gone') },
        { ...real, path: join(dir, 'alias') },
      ]) {
        const reply = await runRequest({
          operation: 'fs/getMetadata',
          params: { path: dir },
          freshness: [entry],
        });
        expect(reply.status === 'error' && reply.payload.data.stale).toBe(true);
      }
    });

    it('rejects a malformed freshness list', async () => {
      const reply = await runRequest({
        operation: 'fs/getMetadata',
        params: { path: '/' },
        freshness: [{ path: '/', dev: 1 }],
      });
      expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('invalid_request');
    });
  });

  it('maps a binary attachment onto its params field', async () => {
    const dir = tempDir();
    const reply = await runRequest({
      operation: 'fs/writeFile',
      params: { path: join(dir, 'f'), dataBase64: '', mode: 'overwrite' },
      binary: { field: 'dataBase64', data: new Uint8Array([104, 105]) },
    });
    expect(reply.status).toBe('ok');
    const read = await runRequest({ operation: 'fs/readFile', params: { path: join(dir, 'f') } });
    expect(read.status === 'ok' && read.binary?.data.toString()).toBe('hi');
  });

  it('rejects a binary attachment without bytes', async () => {
    const reply = await runRequest({
      operation: 'fs/writeFile',
      params: {},
      binary: { field: 'dataBase64', data: 'x' },
    });
    expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('invalid_request');
  });

  it('turns an unexpected OS error into a typed error naming its path', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    const reply = await runRequest({
      operation: 'fs/readDirectory',
      params: { path: join(dir, 'file', 'x') },
    });
    expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('not_directory');
  });

  it('takes only normalised native paths: a URI, a relative path or `..` is refused before anything runs', async () => {
    const dir = tempDir();
    for (const path of [`file://${dir}`, 'relative/x', `${dir}/../x`, `${dir}/./x`, `${dir}/`, `${dir}\0x`]) {
      const reply = await runRequest({ operation: 'fs/createDirectory', params: { path, recursive: true } });
      expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('invalid_params');
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses every sandboxed request without its guard, reads included (fail closed)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    for (const request of [
      { operation: 'fs/readFile', params: { path: join(dir, 'f') } },
      { operation: 'fs/createDirectory', params: { path: join(dir, 'd'), recursive: true } },
    ]) {
      const reply = await runRequest({ ...request, sandboxed: true });
      expect(reply.status === 'error' && reply.payload.message).toMatch(/needs its `guard`/);
      expect((await runRequest({ ...request, sandboxed: true, guard: writableGuard(dir) })).status).toBe(
        'ok',
      );
    }
  });

  it('refuses a `sandboxed` that is not a boolean rather than guessing', async () => {
    const reply = await runRequest({ operation: 'fs/getMetadata', params: { path: '/' }, sandboxed: 'yes' });
    expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('invalid_request');
  });
});
