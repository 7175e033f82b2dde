import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';
import { type CliUser, USERS } from './support/cli.js';
import { cliEnv, createFixture, type Fixture, removeFixture, uri } from './support/fixture.js';
import { diffTrees, snapshotTree, type TreeSnapshot } from './support/tree-snapshot.js';

/**
 * `fs-sandbox serve` with the profile flags: the policy of every request that carries no sandbox
 * (`sandbox` null or absent, as the Codex client sends for its project discovery). Such requests
 * run in bwrap under `--profile workspace-write --cwd WS --deny …`, as root and as nobody: nothing
 * outside the workspace is read or changed, a command runs in the same sandbox, and the reported
 * cwd is the policy's. One served process per user and flag set, shared by its cases.
 */

beforeAll(() => {
  ensureBuilt();
});

function expectError(reply: WireReply, kind: string): void {
  expect(reply.error?.data.errorKind, JSON.stringify(reply)).toBe(kind);
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;
  let serve: ServeProcess;
  let before: TreeSnapshot;

  beforeAll(async () => {
    fixture = await createFixture(user);
    serve = ServeProcess.start(
      ['--profile', 'workspace-write', '--cwd', fixture.ws, '--deny', 'denied.txt', '--require-sandbox'],
      { user, env: cliEnv(fixture), cwd: fixture.base },
    );
    const init = await serve.request('initialize', { clientName: 'codex-environment' });
    expect((init.result as { environmentInfo: { cwd: string } }).environmentInfo.cwd).toBe(uri(fixture.ws));
    serve.notify('initialized');
    before = await snapshotTree(fixture.outside);
  });

  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
    expect(diffTrees(before, await snapshotTree(fixture.outside))).toEqual([]);
    await removeFixture(fixture);
  });

  it('reads and writes the workspace for a request without a sandbox, null or absent', async () => {
    const read = await serve.request('fs/readFile', {
      path: uri(join(fixture.ws, 'hello.txt')),
      sandbox: null,
    });
    expect(Buffer.from(read.result?.dataBase64 as string, 'base64').toString()).toBe('hello sandbox\n');
    const written = await serve.request('fs/writeFile', {
      path: uri(join(fixture.ws, 'new.txt')),
      dataBase64: Buffer.from('new\n').toString('base64'),
    });
    expect(written.result).toEqual({});
    expect(await readFile(join(fixture.ws, 'new.txt'), 'utf8')).toBe('new\n');
  });

  it('refuses what the policy does not grant: outside, through links, denied names, protected metadata', async () => {
    for (const path of [
      join(fixture.outside, 'secret.txt'),
      join(fixture.ws, 'link-out'),
      join(fixture.ws, 'denied.txt'),
    ]) {
      const reply = await serve.request('fs/readFile', { path: uri(path), sandbox: null });
      expect(reply.result, path).toBeUndefined();
      expect(JSON.stringify(reply)).not.toContain(
        Buffer.from(fixture.secretText).toString('base64').slice(0, 12),
      );
    }
    expectError(
      await serve.request('fs/getMetadata', {
        path: uri(join(fixture.outside, 'secret.txt')),
        sandbox: null,
      }),
      'permission_denied',
    );
    expectError(
      await serve.request('fs/writeFile', {
        path: uri(join(fixture.outside, 'w.txt')),
        dataBase64: 'eA==',
        sandbox: null,
      }),
      'permission_denied',
    );
    expectError(
      await serve.request('fs/writeFile', {
        path: uri(join(fixture.ws, '.git', 'config')),
        dataBase64: 'eA==',
      }),
      'protected_path',
    );
  });

  it('runs a command without a sandbox context inside the policy', async () => {
    const start = await serve.request('process/start', {
      processId: 'p1',
      argv: ['/bin/sh', '-c', `cat hello.txt; cat ${join(fixture.outside, 'secret.txt')} || echo refused`],
      cwd: uri(fixture.ws),
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      arg0: null,
      sandbox: null,
    });
    expect(start.result, JSON.stringify(start)).toMatchObject({ processId: 'p1' });
    let output = '';
    for (let afterSeq = 0, closed = false; !closed; ) {
      const read = (await serve.request('process/read', { processId: 'p1', afterSeq, waitMs: 1000 }))
        .result as {
        chunks: Array<{ chunk: string; stream: string }>;
        nextSeq: number;
        closed: boolean;
      };
      for (const chunk of read.chunks)
        if (chunk.stream === 'stdout') output += Buffer.from(chunk.chunk, 'base64');
      afterSeq = read.nextSeq - 1;
      closed = read.closed;
    }
    expect(output).toBe('hello sandbox\nrefused\n');
  });

  it('explains a path under the policy when the request names no context', async () => {
    const explained = await serve.request('fs/explainAccess', {
      path: uri(join(fixture.outside, 'secret.txt')),
    });
    expect((explained.result as { access: string }).access).toBe('none');
    const own = await serve.request('fs/explainAccess', { path: uri(join(fixture.ws, 'hello.txt')) });
    expect((own.result as { access: string }).access).toBe('write');
  });
});

describe('without profile flags', () => {
  it('--require-sandbox still refuses a request without a sandbox; a bad flag is a usage error', async () => {
    const fixture = await createFixture('root');
    try {
      const serve = ServeProcess.start(['--require-sandbox'], { env: cliEnv(fixture), cwd: fixture.ws });
      await serve.handshake();
      expectError(
        await serve.request('fs/readFile', { path: uri(join(fixture.ws, 'hello.txt')), sandbox: null }),
        'permission_denied',
      );
      expect(await serve.stop()).toBe(0);
      const bad = ServeProcess.start(['--profile', 'read-only', '--read-root', join(fixture.base, 'gone')], {
        env: cliEnv(fixture),
        cwd: fixture.ws,
      });
      expect(await bad.exited).toBe(2);
      expect(bad.stderr).toContain(`--read-root ${join(fixture.base, 'gone')} does not exist`);
    } finally {
      await removeFixture(fixture);
    }
  });
});
