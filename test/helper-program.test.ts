import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helperScript, resolveHelperRuntime } from '@fs-sandbox/broker';
import { decodeReply, encodeRequest, type HelperReply, type HelperRequest } from '@fs-sandbox/helper';
import {
  currentHostOs,
  EXECUTABLE_SURFACE,
  isHelperMethod,
  parseForHelper,
  resolveSandboxContext,
} from '@fs-sandbox/policy';
import { LIMITS, nativeToPathUri, type PathGuard } from '@fs-sandbox/policy/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';

/**
 * The helper as the broker runs it: the compiled Bun helper or node on the bundle built for it (as
 * the broker chooses, or as FS_SANDBOX_HELPER_RUNTIME says), one request
 * piped in, one reply read back, checked together with what is on disk afterwards.
 */

const isLinux = process.platform === 'linux';
const hasBwrap = isLinux && existsSync('/usr/bin/bwrap');
const canDropPrivileges = isLinux && process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

let helperCommand: string[];
let root: string;

beforeAll(async () => {
  ensureBuilt();
  const runtime = await resolveHelperRuntime(currentHostOs(), {
    PATH: process.env.PATH,
    FS_SANDBOX_HELPER_RUNTIME: process.env.FS_SANDBOX_HELPER_RUNTIME,
  });
  const script = helperScript(runtime);
  helperCommand = [runtime.executable.path, ...(script === null ? [] : [script])];
  root = mkdtempSync(join(tmpdir(), 'fs-helper-program-'));
}, 120_000);

afterAll(() => {
  if (root) execFileSync('rm', ['-rf', root]);
});

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function runProgram(input: Buffer | Buffer[], launcher: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = [...launcher, ...helperCommand];
    const child = spawn(command as string, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
    for (const part of Array.isArray(input) ? input : [input]) child.stdin.write(part);
    child.stdin.end();
  });
}

/** A request with wire params (URIs, base64), sent as the broker sends it: parsed and converted by the policy package. */
interface WireRequest extends Omit<HelperRequest, 'operation' | 'params'> {
  operation: string;
  params: Record<string, unknown>;
}

function asBrokerSends(req: WireRequest): HelperRequest {
  if (!isHelperMethod(req.operation)) return req as unknown as HelperRequest;
  const { params, sandbox } = parseForHelper(req.operation, req.params, 'linux');
  const sandboxed = resolveSandboxContext(sandbox, 'linux').sandboxed;
  return { ...req, operation: req.operation, params, ...(sandboxed ? { sandboxed } : {}) } as HelperRequest;
}

async function request(req: WireRequest, launcher: string[] = []): Promise<HelperReply> {
  const run = await runProgram(encodeRequest(asBrokerSends(req)), launcher);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return decodeReply(run.stdout);
}

async function succeed(
  operation: string,
  params: Record<string, unknown>,
): Promise<HelperReply & { status: 'ok' }> {
  const reply = await request({ operation, params });
  if (reply.status !== 'ok') throw new Error(`expected success: ${JSON.stringify(reply.payload)}`);
  return reply;
}

function uri(path: string): string {
  return nativeToPathUri(path, 'linux');
}

function fresh(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
}

describe('helper program (node dist/helper.cjs)', () => {
  it('reads a file: one JSON line, then exactly the file bytes', async () => {
    const dir = fresh('read');
    const bytes = Buffer.from([0x00, 0xff, 0x0a, 0x7b]);
    writeFileSync(join(dir, 'f.bin'), bytes);
    const run = await runProgram(
      Buffer.from(`${JSON.stringify({ operation: 'fs/readFile', params: { path: join(dir, 'f.bin') } })}\n`),
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const newline = run.stdout.indexOf(0x0a);
    expect(JSON.parse(run.stdout.subarray(0, newline).toString())).toEqual({
      status: 'ok',
      payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
      binary: { field: 'dataBase64', length: 4 },
    });
    expect(run.stdout.subarray(newline + 1).equals(bytes)).toBe(true);
  });

  it('answers once the request is framed, without waiting for stdin to end', async () => {
    const dir = fresh('framed-end');
    writeFileSync(join(dir, 'r.txt'), 'framed');
    const requests = [
      { operation: 'fs/readFile', params: { path: uri(join(dir, 'r.txt')) } },
      { operation: 'fs/writeFile', params: { path: uri(join(dir, 'w.txt')), dataBase64: 'YWJj' } },
    ];
    for (const req of requests) {
      const child = spawn(helperCommand[0] as string, helperCommand.slice(1), {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const stdout: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      // stdin stays open: a helper that read to EOF would wait here until the timeout.
      for (const part of encodeRequest(asBrokerSends(req))) child.stdin.write(part);
      const code = await Promise.race([
        exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ]);
      child.kill('SIGKILL');
      expect(code).toBe(0);
      expect(decodeReply(Buffer.concat(stdout)).status).toBe('ok');
    }
    expect(readFileSync(join(dir, 'w.txt'), 'utf8')).toBe('abc');
  });

  it('accepts a request without a trailing newline (the Codex form)', async () => {
    const dir = fresh('codex-form');
    const run = await runProgram(
      Buffer.from(
        JSON.stringify({
          operation: 'fs/createDirectory',
          params: { path: join(dir, 'x'), recursive: true },
        }),
      ),
    );
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe(
      '{"status":"ok","payload":{"operation":"fs/createDirectory","response":{}}}\n',
    );
    expect(statSync(join(dir, 'x')).isDirectory()).toBe(true);
  });

  it('answers an error as one JSON line and exits 0', async () => {
    const dir = fresh('missing');
    const run = await runProgram(
      Buffer.from(
        `${JSON.stringify({ operation: 'fs/readFile', params: { path: join(dir, 'nope.txt') } })}\n`,
      ),
    );
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe(
      `${JSON.stringify({ status: 'error', payload: { code: -32004, message: `No such file or directory: ${join(dir, 'nope.txt')}`, data: { errorKind: 'not_found' } } })}\n`,
    );
  });

  it('writes inline base64 (the Codex form) atomically, a new file 0666 under the umask', async () => {
    const dir = fresh('write-inline');
    await succeed('fs/writeFile', {
      path: uri(join(dir, 'f')),
      dataBase64: Buffer.from('inline').toString('base64'),
    });
    expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('inline');
    // The helper program inherits this process's umask.
    expect(statSync(join(dir, 'f')).mode & 0o7777).toBe(0o666 & ~process.umask());
    expect(readdirSync(dir)).toEqual(['f']);
  });

  it('writes binary-framed bytes (no base64 on the wire)', async () => {
    const dir = fresh('write-binary');
    const data = Buffer.alloc(3 * 1024 * 1024 + 7);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const reply = await request({
      operation: 'fs/writeFile',
      params: { path: uri(join(dir, 'big.bin')), dataBase64: data.toString('base64'), mode: 'create' },
    });
    expect(reply).toEqual({ status: 'ok', payload: { operation: 'fs/writeFile', response: {} } });
    expect(readFileSync(join(dir, 'big.bin')).equals(data)).toBe(true);
  });

  it('refuses content that is not bytes (the broker decodes base64; the program never does) without touching the disk', async () => {
    const dir = fresh('write-bad');
    const run = await runProgram(
      Buffer.from(
        `${JSON.stringify({ operation: 'fs/writeFile', params: { path: join(dir, 'f'), dataBase64: 'eA==', mode: 'overwrite' } })}\n`,
      ),
    );
    expect(decodeReply(run.stdout)).toEqual({
      status: 'error',
      payload: {
        code: -32602,
        message: 'invalid type for `dataBase64`: expected bytes (binary framing)',
        data: { errorKind: 'invalid_params' },
      },
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('honours expectedSha256 and create mode', async () => {
    const dir = fresh('write-guards');
    writeFileSync(join(dir, 'f'), 'v1');
    const good = createHash('sha256').update('v1').digest('hex');
    await succeed('fs/writeFile', {
      path: uri(join(dir, 'f')),
      dataBase64: Buffer.from('v2').toString('base64'),
      expectedSha256: good,
    });
    const stale = await request({
      operation: 'fs/writeFile',
      params: { path: uri(join(dir, 'f')), dataBase64: 'eA==', expectedSha256: good },
    });
    expect(stale.status === 'error' && stale.payload.data.errorKind).toBe('hash_mismatch');
    const exists = await request({
      operation: 'fs/writeFile',
      params: { path: uri(join(dir, 'f')), dataBase64: 'eA==', mode: 'create' },
    });
    expect(exists.status === 'error' && exists.payload.data.errorKind).toBe('file_already_exists');
    expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('v2');
  });

  it('refuses to write through a symlink leaf under a restricted sandbox context', async () => {
    const dir = fresh('write-link');
    writeFileSync(join(dir, 'target'), 'keep');
    symlinkSync('target', join(dir, 'link'));
    const sandbox = {
      permissions: {
        type: 'managed',
        file_system: { type: 'restricted', entries: [] },
        network: 'restricted',
      },
      windowsSandboxLevel: 'disabled',
    };
    const guard: PathGuard = {
      entries: [{ path: dir, reason: 'writable_root', rule: 'writable root' }],
      denyGlobs: [],
      deniedIdentities: [],
      surface: { entries: [...EXECUTABLE_SURFACE], home: null },
    };
    const reply = await request({
      operation: 'fs/writeFile',
      params: { path: uri(join(dir, 'link')), dataBase64: 'eA==', sandbox },
      guard,
    });
    expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('symlink_escape');
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('keep');
  });

  it('creates directories, describes, canonicalizes and lists them', async () => {
    const dir = fresh('dirs');
    await succeed('fs/createDirectory', { path: uri(join(dir, 'a', 'b')), recursive: true });
    writeFileSync(join(dir, 'a', 'f.txt'), '12345');
    symlinkSync('a', join(dir, 'alias'));
    const metadata = await succeed('fs/getMetadata', { path: uri(join(dir, 'alias', 'f.txt')) });
    expect(metadata.payload.response).toMatchObject({
      isFile: true,
      isDirectory: false,
      isSymlink: false,
      size: 5,
    });
    const canonical = await succeed('fs/canonicalize', { path: uri(join(dir, 'alias', 'b')) });
    expect(canonical.payload.response).toEqual({ path: uri(join(dir, 'a', 'b')) });
    const listing = await succeed('fs/readDirectory', { path: uri(join(dir, 'a')) });
    const entries = (
      (listing.payload.response as { entries: unknown }).entries as { fileName: string }[]
    ).sort((x, y) => x.fileName.localeCompare(y.fileName));
    expect(entries).toEqual([
      { fileName: 'b', isDirectory: true, isFile: false },
      { fileName: 'f.txt', isDirectory: false, isFile: true },
    ]);
  });

  it('copies a tree, keeping links as links, then removes it without following links', async () => {
    const dir = fresh('copy-remove');
    mkdirSync(join(dir, 'src', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'src', 'sub', 'f'), 'copied');
    writeFileSync(join(dir, 'precious'), 'keep');
    symlinkSync(join(dir, 'precious'), join(dir, 'src', 'link'));
    await succeed('fs/copy', {
      sourcePath: uri(join(dir, 'src')),
      destinationPath: uri(join(dir, 'dst')),
      recursive: true,
    });
    expect(readFileSync(join(dir, 'dst', 'sub', 'f'), 'utf8')).toBe('copied');
    expect(readlinkSync(join(dir, 'dst', 'link'))).toBe(join(dir, 'precious'));
    await succeed('fs/remove', { path: uri(join(dir, 'dst')), recursive: true, force: false });
    expect(existsSync(join(dir, 'dst'))).toBe(false);
    expect(readFileSync(join(dir, 'precious'), 'utf8')).toBe('keep');
  });

  it('walks a tree breadth-first', async () => {
    const dir = fresh('walk');
    mkdirSync(join(dir, 'b'));
    writeFileSync(join(dir, 'a.txt'), '');
    writeFileSync(join(dir, 'b', 'c.txt'), '');
    const reply = await succeed('fs/walk', {
      path: uri(dir),
      options: { maxDepth: 4, maxDirectories: 10, maxEntries: 10, followDirectorySymlinks: false },
    });
    expect(reply.payload.response).toEqual({
      entries: [
        { path: uri(join(dir, 'a.txt')), kind: 'file' },
        { path: uri(join(dir, 'b')), kind: 'directory' },
        { path: uri(join(dir, 'b', 'c.txt')), kind: 'file' },
      ],
      errors: [],
      truncated: false,
    });
  });

  it('opens for read and reads a range as binary-framed bytes', async () => {
    const dir = fresh('range');
    writeFileSync(join(dir, 'digits'), '0123456789');
    const opened = await succeed('fs/openForRead', { path: uri(join(dir, 'digits')) });
    const { dev, ino, size } = opened.payload.response as { dev: string; ino: string; size: number };
    expect(size).toBe(10);
    const run = await runProgram(
      encodeRequest({
        operation: 'fs/readRange',
        params: { path: join(dir, 'digits'), offset: 8, len: 4, identity: { dev, ino } },
      }),
    );
    expect(run.code).toBe(0);
    const newline = run.stdout.indexOf(0x0a);
    expect(JSON.parse(run.stdout.subarray(0, newline).toString())).toEqual({
      status: 'ok',
      payload: { operation: 'fs/readRange', response: { chunk: '', eof: true } },
      binary: { field: 'chunk', length: 2 },
    });
    expect(run.stdout.subarray(newline + 1).toString()).toBe('89');
  });

  it('refuses a FIFO promptly instead of blocking on it', async () => {
    const dir = fresh('fifo');
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    const reply = await request({ operation: 'fs/readFile', params: { path: uri(join(dir, 'pipe')) } });
    expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('not_regular_file');
  });

  it('refuses to act on a stale view (freshness mismatch) and touches nothing', async () => {
    const dir = fresh('stale');
    const stats = lstatSync(dir, { bigint: true });
    const reply = await request({
      operation: 'fs/writeFile',
      params: { path: uri(join(dir, 'f')), dataBase64: 'eA==' },
      freshness: [{ path: dir, dev: stats.dev.toString(), ino: (stats.ino + 1n).toString() }],
    });
    expect(reply).toEqual({
      status: 'error',
      payload: {
        code: -32603,
        message: `sandbox view is stale: ${dir} changed since the helper started`,
        data: { errorKind: 'helper_failed', stale: true },
      },
    });
    expect(readdirSync(dir)).toEqual([]);
    const freshReply = await request({
      operation: 'fs/writeFile',
      params: { path: uri(join(dir, 'f')), dataBase64: 'eA==' },
      freshness: [{ path: dir, dev: stats.dev.toString(), ino: stats.ino.toString() }],
    });
    expect(freshReply.status).toBe('ok');
  });

  describe('protocol failures exit 1 with one stderr line and nothing on stdout', () => {
    const cases: [string, Buffer][] = [
      ['unparsable JSON', Buffer.from('{not json}\n')],
      ['empty input', Buffer.alloc(0)],
      ['a JSON line that is not an object', Buffer.from('[1,2]\n')],
      [
        'a short binary trailer',
        Buffer.from(
          '{"operation":"fs/writeFile","params":{},"binary":{"field":"dataBase64","length":10}}\nabc',
        ),
      ],
      [
        'bytes after the binary trailer',
        Buffer.from(
          '{"operation":"fs/writeFile","params":{},"binary":{"field":"dataBase64","length":1}}\nab',
        ),
      ],
      [
        'a second request',
        Buffer.from(
          '{"operation":"fs/getMetadata","params":{}}\n{"operation":"fs/getMetadata","params":{}}\n',
        ),
      ],
      [
        'a malformed binary header',
        Buffer.from('{"operation":"fs/writeFile","params":{},"binary":{"field":"dataBase64","length":-1}}\n'),
      ],
      [
        'a binary payload announced past LIMITS.helperMaxRequestBytes (refused before reading it)',
        Buffer.from(
          `{"operation":"fs/writeFile","params":{},"binary":{"field":"dataBase64","length":${LIMITS.helperMaxRequestBytes}}}\n`,
        ),
      ],
    ];
    for (const [name, input] of cases) {
      it(name, async () => {
        const run = await runProgram(input);
        expect(run.code).toBe(1);
        expect(run.stdout.length).toBe(0);
        expect(run.stderr).toMatch(/^fs-sandbox helper: protocol failure: [^\n]+\n$/);
      });
    }
  });

  it('answers a request it understands but cannot accept with an error reply, not a protocol failure', async () => {
    const reply = await request({ operation: 'fs/frobnicate', params: {} } as WireRequest);
    expect(reply.status === 'error' && reply.payload.message).toBe(
      'unknown helper operation `fs/frobnicate`',
    );
  });

  it.skipIf(!hasBwrap)(
    'reports EROFS inside a read-only bind mount as permission_denied (needs bwrap)',
    async () => {
      const dir = fresh('erofs');
      const reply = await request(
        { operation: 'fs/writeFile', params: { path: uri(join(dir, 'f')), dataBase64: 'eA==' } },
        [
          '/usr/bin/bwrap',
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--unshare-all',
          '--die-with-parent',
          '--',
        ],
      );
      expect(reply.status === 'error' && reply.payload).toEqual({
        code: -32600,
        message: `Permission denied: ${join(dir, 'f')} is on a read-only file system`,
        data: { errorKind: 'permission_denied' },
      });
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it.skipIf(!canDropPrivileges)(
    'reports EACCES for an unprivileged user as permission_denied (needs root + setpriv)',
    async () => {
      const dir = fresh('eacces');
      chmodSync(root, 0o755);
      chmodSync(dir, 0o755);
      const reply = await request(
        { operation: 'fs/writeFile', params: { path: uri(join(dir, 'f')), dataBase64: 'eA==' } },
        ['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'],
      );
      expect(reply.status === 'error' && reply.payload).toEqual({
        code: -32600,
        message: `Permission denied: ${join(dir, 'f')}`,
        data: { errorKind: 'permission_denied' },
      });
    },
  );
});
