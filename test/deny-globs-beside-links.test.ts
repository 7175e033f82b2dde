import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';
import { type CliUser, NOBODY_UID, PRECHECK_MODES, USERS } from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { diffTrees, snapshotTree, type TreeSnapshot } from './support/tree-snapshot.js';

/**
 * A deny glob over a whole workspace that holds links to outside it (`out -> /elsewhere`, not even
 * readable; the fixture's `link-out`, `dirlink-out`, `deeplink` into `outside`), through the real
 * `fs-sandbox serve` and bwrap, as root and as nobody, with the pre-check on and off. A link's
 * target is judged where it really is: none of these targets is readable in the sandbox, so the
 * glob is enforced on the workspace (its matches masked) and every request works, where it used to
 * refuse them all. No byte of a `.pem` file is ever returned, and nothing outside changes.
 */

const PEM = 'PEM-SECRET-CONTENT';
const PEM_B64 = Buffer.from(PEM).toString('base64').slice(0, 12);

beforeAll(() => {
  ensureBuilt();
});

describe.each(USERS)('as %s', (user: CliUser) => {
  describe.each(PRECHECK_MODES)('%s', (_mode, precheck) => {
    let fixture: Fixture;
    let elsewhere: string;
    let serve: ServeProcess;
    let before: TreeSnapshot;
    let sandbox: Record<string, unknown>;

    beforeAll(async () => {
      fixture = await createFixture(user);
      elsewhere = join(fixture.base, 'elsewhere');
      mkdirSync(elsewhere);
      writeFileSync(join(elsewhere, 'far.pem'), PEM);
      mkdirSync(join(fixture.ws, 'certs', 'deep'), { recursive: true });
      writeFileSync(join(fixture.ws, 'certs', 'server.pem'), PEM);
      writeFileSync(join(fixture.ws, 'certs', 'deep', 'id.pem'), PEM);
      writeFileSync(join(fixture.outside, 'outside.pem'), PEM);
      symlinkSync(elsewhere, join(fixture.ws, 'out'));
      if (user === 'nobody') execFileSync('chown', ['-R', '-h', `${NOBODY_UID}:${NOBODY_UID}`, fixture.base]);
      // Not even readable by the broker's user (root reads it anyway).
      chmodSync(elsewhere, 0o000);
      sandbox = workspaceContext(fixture);
      (sandbox.permissions as { file_system: { entries: unknown[] } }).file_system.entries.push({
        path: { type: 'glob_pattern', pattern: '**/*.pem' },
        access: 'deny',
      });
      before = await snapshotTree(fixture.outside);
      serve = ServeProcess.start(precheck ? [] : ['--no-precheck'], {
        user,
        env: cliEnv(fixture),
        cwd: fixture.ws,
      });
      await serve.handshake();
    });

    afterAll(async () => {
      expect(await serve.stop()).toBe(0);
      chmodSync(elsewhere, 0o755);
      expect(diffTrees(before, await snapshotTree(fixture.outside))).toEqual([]);
      await removeFixture(fixture);
    });

    async function call(method: string, params: Record<string, unknown>): Promise<WireReply> {
      const reply = await serve.request(method, { ...params, sandbox });
      const text = JSON.stringify(reply);
      expect(text, method).not.toContain(PEM);
      expect(text, method).not.toContain(PEM_B64);
      expect(reply.error?.data.errorKind, `${method}: ${text}`).not.toBe('internal_error');
      return reply;
    }

    it('reads, writes, searches and globs the workspace', async () => {
      const read = await call('fs/readFile', { path: uri(join(fixture.ws, 'hello.txt')) });
      expect(Buffer.from(read.result?.dataBase64 as string, 'base64').toString()).toBe('hello sandbox\n');
      const written = await call('fs/writeFile', {
        path: uri(join(fixture.ws, `new-${precheck}.txt`)),
        dataBase64: Buffer.from('new\n').toString('base64'),
      });
      expect(written.result).toEqual({});
      expect(readFileSync(join(fixture.ws, `new-${precheck}.txt`), 'utf8')).toBe('new\n');
      const search = await call('fs/search', {
        path: uri(fixture.ws),
        pattern: 'hello|PEM',
        includeHidden: true,
      });
      const found = (search.result?.matches as Array<{ path: string }> | undefined)?.map(
        (match) => match.path,
      );
      expect(found).toContain(uri(join(fixture.ws, 'hello.txt')));
      const glob = await call('fs/glob', { path: uri(fixture.ws), patterns: ['**/*.txt'] });
      expect(
        (glob.result?.entries as Array<{ path: string }> | undefined)?.map((entry) => entry.path),
      ).toContain(uri(join(fixture.ws, 'hello.txt')));
      const walk = await call('fs/walk', { path: uri(fixture.ws) });
      expect(walk.result?.entries).toEqual(
        expect.arrayContaining([{ path: uri(join(fixture.ws, 'sub')), kind: 'directory' }]),
      );
    });

    it('returns no byte of a .pem file, under any spelling', async () => {
      for (const path of [
        join(fixture.ws, 'certs', 'server.pem'),
        join(fixture.ws, 'certs', 'deep', 'id.pem'),
        join(fixture.ws, 'out', 'far.pem'),
        join(fixture.ws, 'dirlink-out', 'outside.pem'),
        join(elsewhere, 'far.pem'),
      ]) {
        for (const spelling of [uri(path), `file:///proc/self/root${path}`]) {
          const reply = await call('fs/readFile', { path: spelling });
          expect(reply.error, spelling).toBeDefined();
        }
      }
      // A tree copy skips the masked matches (docs/protocols/exec-server.md, fs/copy): no .pem in it.
      const copy = join(fixture.ws, `certs-copy-${precheck}`);
      await call('fs/copy', {
        sourcePath: uri(join(fixture.ws, 'certs')),
        destinationPath: uri(copy),
        recursive: true,
      });
      expect(readdirSync(copy, { recursive: true })).toEqual(['deep']);
    });
  });
});
