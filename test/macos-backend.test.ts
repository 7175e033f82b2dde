import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeToPathUri } from '@fs-sandbox/policy';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { callMethod } from './support/cli.js';

/**
 * The Seatbelt backend for real: the built `fs-sandbox call`, /usr/bin/sandbox-exec, the real
 * helper. Most refusals run with the broker's pre-check off, so they pass only when the kernel
 * sandbox itself says no, and every refusal also checks that nothing changed on disk.
 */

const ON_MACOS = process.platform === 'darwin';
const SECRET_ENV = { FS_SANDBOX_E2E_API_KEY: 'sk-macos-e2e-7f3a9c0d1e2b' };
const HELPER_ENV_ALLOWLIST = ['PATH', 'TMPDIR', 'TMP', 'TEMP', '__CF_USER_TEXT_ENCODING'];
const SECRET_TEXT = 'top secret: the launch codes\n';

/**
 * A stand-in helper (selected with FS_SANDBOX_HELPER_BUNDLE) that tries, from inside the sandbox,
 * what a compromised helper would try, and reports each outcome as an fs/getMetadata result.
 */
const PROBE = `'use strict';
const fs = require('node:fs');
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf8');
  const request = JSON.parse(text.slice(0, text.indexOf('\\n')));
  const ws = decodeURIComponent(new URL(request.params.path).pathname);
  const attempt = (action) => { try { action(); return 'ok'; } catch (error) { return error.code; } };
  const report = {
    env: process.env,
    insideWrite: attempt(() => fs.writeFileSync(ws + '/probe.txt', 'probe')),
    outsideWrite: attempt(() => fs.writeFileSync(ws + '/../outside/planted.txt', 'x')),
    outsideRead: attempt(() => fs.readFileSync(ws + '/../outside/secret.txt')),
    deniedRead: attempt(() => fs.readFileSync(ws + '/denied.txt')),
    gitWrite: attempt(() => fs.writeFileSync(ws + '/.git/HEAD', 'x')),
    gitOtherCaseWrite: attempt(() => fs.writeFileSync(ws + '/.GIT/HEAD', 'x')),
    rootRename: attempt(() => fs.renameSync(ws, ws + '-moved')),
    boundaryRename: attempt(() => fs.renameSync(ws + '/docs', ws + '/docs-moved')),
    plainRename: attempt(() => fs.renameSync(ws + '/plain', ws + '/plain-moved')),
    readOnlyWrite: attempt(() => fs.writeFileSync(ws + '/docs/frozen/f.txt', 'x')),
    hardLinkOfDenied: attempt(() => fs.linkSync(ws + '/denied.txt', ws + '/alias.txt')),
    scratchWrite: attempt(() => fs.writeFileSync('/private/tmp/fs-sandbox-probe-' + process.pid, 'x')),
  };
  process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/getMetadata', response: report } }) + '\\n');
});
`;

interface MacFixture {
  base: string;
  ws: string;
  outside: string;
  ro: string;
  tmp: string;
}

/**
 * base/ws (writable, with .git, a denied file and dir, a read-only docs/frozen, symlinks out),
 * base/outside, base/ro, base/tmp.
 */
async function createFixture(): Promise<MacFixture> {
  // os.tmpdir() is under /var/folders: the /var -> /private/var alias is exercised on every run.
  const base = await mkdtemp(join(tmpdir(), 'fs-sandbox-macos-'));
  const f = {
    base,
    ws: join(base, 'ws'),
    outside: join(base, 'outside'),
    ro: join(base, 'ro'),
    tmp: join(base, 'tmp'),
  };
  for (const dir of [
    join(f.ws, '.git'),
    join(f.ws, 'denied-dir'),
    join(f.ws, 'docs', 'frozen'),
    join(f.ws, 'plain'),
    f.outside,
    f.ro,
    f.tmp,
  ]) {
    await mkdir(dir, { recursive: true });
  }
  await writeFile(join(f.ws, 'hello.txt'), 'hello sandbox\n');
  await writeFile(join(f.ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(f.ws, 'denied.txt'), 'denied file content\n');
  await writeFile(join(f.ws, 'denied-dir', 'secret2.txt'), 'denied directory content\n');
  await writeFile(join(f.outside, 'secret.txt'), SECRET_TEXT);
  await writeFile(join(f.ro, 'r.txt'), 'read only\n');
  await writeFile(join(f.ws, 'docs', 'frozen', 'f.txt'), 'frozen\n');
  await symlink('../outside/secret.txt', join(f.ws, 'link-out'));
  await symlink('../outside', join(f.ws, 'dirlink-out'));
  await writeFile(join(base, 'probe.cjs'), PROBE);
  return f;
}

const uri = (path: string) => nativeToPathUri(path, 'macos');
const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });

/** Write the workspace (docs/frozen read-only), read `ro`, deny one file and one directory; no full-disk read. */
function workspaceContext(f: MacFixture, writableRoot = f.ws): Record<string, unknown> {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          entry(writableRoot, 'write'),
          entry(f.ro, 'read'),
          entry(join(f.ws, 'docs', 'frozen'), 'read'),
          entry(join(f.ws, 'denied-dir'), 'deny'),
          entry(join(f.ws, 'denied.txt'), 'deny'),
        ],
      },
      network: 'restricted',
    },
    cwd: uri(f.ws),
    workspaceRoots: [uri(f.ws)],
  };
}

describe.skipIf(!ON_MACOS)(
  `macOS Seatbelt backend end to end (skipped: needs macOS, this is ${process.platform})`,
  () => {
    let f: MacFixture;

    beforeAll(() => {
      ensureBuilt();
    });

    beforeEach(async () => {
      f = await createFixture();
    });

    afterEach(async () => {
      await rm(f.base, { recursive: true, force: true });
      await rm(`${f.ws}-moved`, { recursive: true, force: true });
    });

    function call(
      method: string,
      params: Record<string, unknown>,
      options: { precheck?: boolean; env?: Record<string, string> } = {},
    ) {
      return callMethod(
        method,
        { sandbox: workspaceContext(f), ...params },
        {
          user: 'root',
          env: { PATH: '/usr/bin:/bin', TMPDIR: f.tmp, ...SECRET_ENV, ...options.env },
          precheck: options.precheck,
          timeoutMs: 60_000,
        },
      );
    }

    /** A refusal the kernel must make on its own (pre-check off): typed error, secret unseen. */
    async function expectKernelRefusal(method: string, params: Record<string, unknown>): Promise<string> {
      const outcome = await call(method, params, { precheck: false });
      const label = `${method} ${JSON.stringify(params)}`;
      expect(outcome.code, `${label}: ${outcome.run.stdout}${outcome.run.stderr}`).toBe(1);
      expect(outcome.error?.data.errorKind, label).not.toBe('internal_error');
      expect(outcome.error?.data.errorKind, label).not.toBe('sandbox_unavailable');
      expect(outcome.run.stdout + outcome.run.stderr, label).not.toContain('launch codes');
      return outcome.error?.data.errorKind as string;
    }

    it('reads a file inside the workspace through the sandbox', async () => {
      const outcome = await call('fs/readFile', { path: uri(join(f.ws, 'hello.txt')) }, { precheck: false });
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      expect(Buffer.from(String(outcome.result?.dataBase64), 'base64').toString()).toBe('hello sandbox\n');
    });

    it('writes a file inside the workspace, and it is on disk', async () => {
      const target = join(f.ws, 'sub-new.txt');
      const data = Buffer.from('written under seatbelt\n');
      const outcome = await call(
        'fs/writeFile',
        { path: uri(target), dataBase64: data.toString('base64') },
        { precheck: false },
      );
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      expect(await readFile(target, 'utf8')).toBe('written under seatbelt\n');
    });

    it('the kernel refuses a write outside the writable roots, and nothing is created', async () => {
      const outsideTarget = join(f.outside, 'evil.txt');
      const roTarget = join(f.ro, 'evil.txt');
      const topLevel = join(f.base, 'evil.txt');
      await expectKernelRefusal('fs/writeFile', { path: uri(outsideTarget), dataBase64: 'cHdu' });
      await expectKernelRefusal('fs/writeFile', { path: uri(roTarget), dataBase64: 'cHdu' });
      await expectKernelRefusal('fs/createDirectory', { path: uri(topLevel) });
      for (const path of [outsideTarget, roTarget, topLevel]) expect(existsSync(path), path).toBe(false);
    });

    it('the kernel keeps a denied file and a denied directory unreadable', async () => {
      await expectKernelRefusal('fs/readFile', { path: uri(join(f.ws, 'denied.txt')) });
      await expectKernelRefusal('fs/readFile', { path: uri(join(f.ws, 'denied-dir', 'secret2.txt')) });
      await expectKernelRefusal('fs/readDirectory', { path: uri(join(f.ws, 'denied-dir')) });
    });

    it('the kernel refuses writes into .git, under any spelling of the name', async () => {
      await expectKernelRefusal('fs/writeFile', {
        path: uri(join(f.ws, '.git', 'HEAD')),
        dataBase64: 'cHdu',
      });
      await expectKernelRefusal('fs/writeFile', {
        path: uri(join(f.ws, '.GIT', 'HEAD')),
        dataBase64: 'cHdu',
      });
      await expectKernelRefusal('fs/createDirectory', { path: uri(join(f.ws, '.git', 'hooks')) });
      expect(await readFile(join(f.ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
      expect(existsSync(join(f.ws, '.git', 'hooks'))).toBe(false);
    });

    it('refuses a symlink escape out of the workspace', async () => {
      await expectKernelRefusal('fs/readFile', { path: uri(join(f.ws, 'link-out')) });
      await expectKernelRefusal('fs/readFile', { path: uri(join(f.ws, 'dirlink-out', 'secret.txt')) });
      await expectKernelRefusal('fs/writeFile', {
        path: uri(join(f.ws, 'dirlink-out', 'planted.txt')),
        dataBase64: 'cHdu',
      });
      expect(existsSync(join(f.outside, 'planted.txt'))).toBe(false);
    });

    it('refuses to build a sandbox whose writable root crosses a symlink', async () => {
      const linkedRoot = join(f.base, 'ws-link');
      await symlink(f.ws, linkedRoot);
      const outcome = await call('fs/readFile', {
        path: uri(join(linkedRoot, 'hello.txt')),
        sandbox: workspaceContext(f, linkedRoot),
      });
      expect(outcome.error?.data.errorKind).toBe('sandbox_unavailable');
      expect(outcome.error?.message).toMatch(/resolves through a symlink/);
    });

    it('a compromised helper sees only the allowlisted environment and is stopped by the kernel', async () => {
      const outcome = await call(
        'fs/getMetadata',
        { path: uri(f.ws) },
        { env: { FS_SANDBOX_HELPER_BUNDLE: join(f.base, 'probe.cjs') } },
      );
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      const report = outcome.result as Record<string, unknown> & { env: Record<string, string> };
      expect(Object.keys(report.env).filter((name) => !HELPER_ENV_ALLOWLIST.includes(name))).toEqual([]);
      expect(JSON.stringify(report.env)).not.toContain(SECRET_ENV.FS_SANDBOX_E2E_API_KEY);
      expect(JSON.stringify(report.env)).not.toContain('FS_SANDBOX_HELPER_BUNDLE');
      // The controls: the sandbox lets the helper write and rename where the policy says it may.
      expect(report.insideWrite).toBe('ok');
      expect(report.plainRename).toBe('ok');
      for (const key of [
        'outsideWrite',
        'outsideRead',
        'deniedRead',
        'gitWrite',
        'gitOtherCaseWrite',
        'rootRename',
        'boundaryRename',
        'readOnlyWrite',
        'hardLinkOfDenied',
        'scratchWrite',
      ]) {
        expect(report[key], key).toBe('EPERM');
      }
      expect(existsSync(join(f.outside, 'planted.txt'))).toBe(false);
      expect(existsSync(join(f.ws, 'alias.txt'))).toBe(false);
      expect(existsSync(f.ws)).toBe(true);
      expect(await readFile(join(f.ws, 'docs', 'frozen', 'f.txt'), 'utf8')).toBe('frozen\n');
      expect(await readFile(join(f.ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    });
  },
);
