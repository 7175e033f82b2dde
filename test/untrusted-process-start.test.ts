import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * The trust gate covers commands too: a command can write whatever its sandbox makes writable (or,
 * with no sandbox, whatever the server's user can), so `serve --untrusted` starts none, sandboxed
 * or not, and nothing it would have written appears. The same server still reads.
 */

let dir: string;
let work: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-untrusted-process-'));
  work = join(dir, 'work');
  await mkdir(work);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('serve --untrusted and process/start', () => {
  it('refuses every command, with or without a sandbox, and nothing is written; reads still work', async () => {
    const serve = ServeProcess.start(['--untrusted']);
    try {
      await serve.handshake();
      const contexts = {
        sandboxed: sandboxContext({ read: ['/usr', '/bin', '/lib', '/lib64', '/etc'], write: [work] }),
        unsandboxed: undefined,
      };
      for (const [name, sandbox] of Object.entries(contexts)) {
        const planted = join(work, `planted-${name}`);
        const reply = await serve.request('process/start', {
          processId: name,
          argv: ['/bin/sh', '-c', `echo pwned > ${planted}`],
          cwd: uri(work),
          env: { PATH: '/usr/bin:/bin' },
          tty: false,
          ...(sandbox === undefined ? {} : { sandbox }),
        });
        expect(reply.error?.data.errorKind, name).toBe('untrusted_workspace');
        // Nothing started: the server holds no process by that id (a started one is kept for
        // process/read, running or exited), so nothing can write the file later either.
        const read = await serve.request('process/read', { processId: name });
        expect(read.error?.message, name).toBe(`unknown process id ${name}`);
        expect(existsSync(planted), name).toBe(false);
      }
      const listed = await serve.request('fs/readDirectory', {
        path: uri(work),
        sandbox: sandboxContext({ read: [work] }),
      });
      expect(listed.result?.entries).toEqual([]);
    } finally {
      await serve.stop();
    }
  });
});
