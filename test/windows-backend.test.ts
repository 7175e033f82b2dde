import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeToPathUri } from '@fs-sandbox/policy';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { callMethod } from './support/cli.js';

/**
 * The restricted-token backend for real: the built `fs-sandbox call`, the Windows launcher with
 * koffi, the real helper. Refusals run with the broker's pre-check off, so they pass only when the
 * token and the ACLs themselves say no, and each one also checks the disk.
 */

const ON_WINDOWS = process.platform === 'win32';
const SECRET_ENV = { FS_SANDBOX_E2E_API_KEY: 'sk-windows-e2e-4b8e1f0a9c2d' };
const HELPER_ENV_ALLOWLIST = ['PATH', 'TMPDIR', 'TMP', 'TEMP', 'SYSTEMROOT', 'SYSTEMDRIVE'];
const DENIED_TEXT = 'denied file content\n';
const CAPABILITY_SID_PREFIX = 'S-1-15-3-1024-';

/** A stand-in helper (FS_SANDBOX_HELPER_BUNDLE) that tries what a compromised helper would try. */
const PROBE = `'use strict';
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { fileURLToPath } = require('node:url');
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf8');
  const request = JSON.parse(text.slice(0, text.indexOf('\\n')));
  const ws = fileURLToPath(request.params.path);
  const attempt = (action) => { try { action(); return 'ok'; } catch (error) { return error.code; } };
  const child = spawnSync(process.execPath, ['-e', '0'], { timeout: 10000 });
  const report = {
    env: process.env,
    insideWrite: attempt(() => fs.writeFileSync(ws + '\\\\probe.txt', 'probe')),
    plainRename: attempt(() => fs.renameSync(ws + '\\\\plain', ws + '\\\\plain-moved')),
    outsideWrite: attempt(() => fs.writeFileSync(ws + '\\\\..\\\\outside\\\\planted.txt', 'x')),
    gitWrite: attempt(() => fs.writeFileSync(ws + '\\\\.git\\\\HEAD', 'x')),
    readOnlyWrite: attempt(() => fs.writeFileSync(ws + '\\\\docs\\\\frozen\\\\f.txt', 'x')),
    boundaryRename: attempt(() => fs.renameSync(ws + '\\\\docs', ws + '\\\\docs-moved')),
    rootRename: attempt(() => fs.renameSync(ws, ws + '-moved')),
    childProcess: child.status === 0 ? 'ok' : 'refused',
  };
  process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/getMetadata', response: report } }) + '\\n');
});
`;

interface WinFixture {
  base: string;
  ws: string;
  outside: string;
  tmp: string;
}

/** base\\ws (writable, with .git, a read-only docs\\frozen, a junction out), base\\outside, base\\tmp. */
async function createFixture(): Promise<WinFixture> {
  // realpath expands the 8.3 short names os.tmpdir() often holds (C:\Users\RUNNER~1\...), which the
  // backend refuses as aliases.
  const base = await mkdtemp(join(realpathSync.native(tmpdir()), 'fs-sandbox-windows-'));
  const f = { base, ws: join(base, 'ws'), outside: join(base, 'outside'), tmp: join(base, 'tmp') };
  for (const dir of [
    join(f.ws, '.git'),
    join(f.ws, 'docs', 'frozen'),
    join(f.ws, 'plain'),
    f.outside,
    f.tmp,
  ]) {
    await mkdir(dir, { recursive: true });
  }
  await writeFile(join(f.ws, 'hello.txt'), 'hello sandbox\n');
  await writeFile(join(f.ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(f.ws, 'docs', 'frozen', 'f.txt'), 'frozen\n');
  await writeFile(join(f.ws, 'denied.txt'), DENIED_TEXT);
  await writeFile(join(f.outside, 'secret.txt'), 'outside\n');
  // A junction needs no privilege, unlike a symlink.
  await symlink(f.outside, join(f.ws, 'dirlink-out'), 'junction');
  await writeFile(join(base, 'probe.cjs'), PROBE);
  return f;
}

const uri = (path: string) => nativeToPathUri(path, 'windows');
const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });
const ROOT_READ = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };

/** Full-disk read, write the workspace with docs\frozen read-only: what a write-restricted token can enforce. */
function workspaceContext(f: WinFixture, level = 'restricted-token'): Record<string, unknown> {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [ROOT_READ, entry(f.ws, 'write'), entry(join(f.ws, 'docs', 'frozen'), 'read')],
      },
      network: 'restricted',
    },
    cwd: uri(f.ws),
    workspaceRoots: [uri(f.ws)],
    windowsSandboxLevel: level,
  };
}

describe.skipIf(!ON_WINDOWS)(
  `Windows restricted-token backend end to end (skipped: needs Windows, this is ${process.platform})`,
  () => {
    let f: WinFixture;

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
      const env: Record<string, string> = {
        Path: process.env.Path ?? process.env.PATH ?? '',
        SystemRoot: process.env.SystemRoot ?? 'C:\\Windows',
        TEMP: f.tmp,
        TMP: f.tmp,
        ...SECRET_ENV,
        ...options.env,
      };
      return callMethod(
        method,
        { sandbox: workspaceContext(f), ...params },
        {
          user: 'root',
          env,
          precheck: options.precheck,
          timeoutMs: 90_000,
        },
      );
    }

    async function expectKernelRefusal(method: string, params: Record<string, unknown>): Promise<void> {
      const outcome = await call(method, params, { precheck: false });
      const label = `${method} ${JSON.stringify(params)}`;
      expect(outcome.code, `${label}: ${outcome.run.stdout}${outcome.run.stderr}`).toBe(1);
      expect(outcome.error?.data.errorKind, label).not.toBe('internal_error');
      expect(outcome.error?.data.errorKind, label).not.toBe('sandbox_unavailable');
    }

    /** No ACE of a per-run capability SID may outlive its run. */
    function expectNoCapabilityAces(path: string): void {
      expect(execFileSync('icacls', [path], { encoding: 'utf8' })).not.toContain(CAPABILITY_SID_PREFIX);
    }

    it('reads a file inside the workspace through the sandbox', async () => {
      const outcome = await call('fs/readFile', { path: uri(join(f.ws, 'hello.txt')) }, { precheck: false });
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      expect(Buffer.from(String(outcome.result?.dataBase64), 'base64').toString()).toBe('hello sandbox\n');
    });

    it('writes a file inside the workspace, it is on disk, and the ACLs are restored afterwards', async () => {
      const target = join(f.ws, 'new.txt');
      const outcome = await call(
        'fs/writeFile',
        {
          path: uri(target),
          dataBase64: Buffer.from('written under a restricted token\n').toString('base64'),
        },
        { precheck: false },
      );
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      expect(await readFile(target, 'utf8')).toBe('written under a restricted token\n');
      for (const path of [f.ws, target, join(f.ws, '.git'), join(f.ws, 'docs', 'frozen')])
        expectNoCapabilityAces(path);
    });

    it('the token refuses a write outside the writable roots, and nothing is created', async () => {
      const outsideTarget = join(f.outside, 'evil.txt');
      const topLevel = join(f.base, 'evil-dir');
      await expectKernelRefusal('fs/writeFile', { path: uri(outsideTarget), dataBase64: 'cHdu' });
      await expectKernelRefusal('fs/createDirectory', { path: uri(topLevel) });
      expect(existsSync(outsideTarget)).toBe(false);
      expect(existsSync(topLevel)).toBe(false);
    });

    it('the token refuses writes into .git and into a read-only subpath', async () => {
      await expectKernelRefusal('fs/writeFile', {
        path: uri(join(f.ws, '.git', 'HEAD')),
        dataBase64: 'cHdu',
      });
      await expectKernelRefusal('fs/writeFile', {
        path: uri(join(f.ws, 'docs', 'frozen', 'f.txt')),
        dataBase64: 'cHdu',
      });
      await expectKernelRefusal('fs/createDirectory', { path: uri(join(f.ws, '.git', 'hooks')) });
      expect(await readFile(join(f.ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
      expect(await readFile(join(f.ws, 'docs', 'frozen', 'f.txt'), 'utf8')).toBe('frozen\n');
      expect(existsSync(join(f.ws, '.git', 'hooks'))).toBe(false);
    });

    it('refuses a write through a junction that escapes the workspace', async () => {
      await expectKernelRefusal('fs/writeFile', {
        path: uri(join(f.ws, 'dirlink-out', 'planted.txt')),
        dataBase64: 'cHdu',
      });
      expect(existsSync(join(f.outside, 'planted.txt'))).toBe(false);
    });

    it('refuses a policy with read restrictions instead of running it with reads unrestricted', async () => {
      const denied = join(f.ws, 'denied.txt');
      // No full-disk read here: with `root:read` the policy layer itself refuses a narrowing deny.
      const readRestricted = {
        permissions: {
          type: 'managed',
          file_system: { type: 'restricted', entries: [entry(f.ws, 'write'), entry(denied, 'deny')] },
        },
        cwd: uri(f.ws),
        windowsSandboxLevel: 'restricted-token',
      };
      const outcome = await call('fs/readFile', { path: uri(denied), sandbox: readRestricted });
      expect(outcome.error?.data.errorKind).toBe('sandbox_unavailable');
      expect(outcome.error?.message).toContain('cannot enforce read restrictions');
      expect(outcome.run.stdout + outcome.run.stderr).not.toContain(DENIED_TEXT.trim());
    });

    it('refuses a restricted policy at level disabled: never an unsandboxed run', async () => {
      const target = join(f.outside, 'unsandboxed.txt');
      const outcome = await call('fs/writeFile', {
        path: uri(target),
        dataBase64: 'cHdu',
        sandbox: workspaceContext(f, 'disabled'),
      });
      expect(outcome.error?.data.errorKind).toBe('sandbox_unavailable');
      expect(existsSync(target)).toBe(false);
    });

    it('a compromised helper sees only the allowlisted environment and is stopped by the token and the job', async () => {
      const outcome = await call(
        'fs/getMetadata',
        { path: uri(f.ws) },
        { env: { FS_SANDBOX_HELPER_BUNDLE: join(f.base, 'probe.cjs') } },
      );
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      const report = outcome.result as Record<string, string> & { env: Record<string, string> };
      const unexpected = Object.keys(report.env).filter(
        (name) => !HELPER_ENV_ALLOWLIST.includes(name.toUpperCase()),
      );
      expect(unexpected).toEqual([]);
      expect(JSON.stringify(report.env)).not.toContain(SECRET_ENV.FS_SANDBOX_E2E_API_KEY);
      // The controls: the token lets the helper write and rename where the policy says it may.
      expect(report.insideWrite).toBe('ok');
      expect(report.plainRename).toBe('ok');
      for (const key of ['outsideWrite', 'gitWrite', 'readOnlyWrite', 'boundaryRename', 'rootRename']) {
        expect(['EPERM', 'EACCES'], `${key}: ${report[key]}`).toContain(report[key]);
      }
      expect(report.childProcess).toBe('refused');
      expect(existsSync(join(f.outside, 'planted.txt'))).toBe(false);
      expect(existsSync(join(f.ws, 'docs'))).toBe(true);
      expect(await readFile(join(f.ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
      expectNoCapabilityAces(f.ws);
    });
  },
);
