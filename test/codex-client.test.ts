import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { base64 as base64Of, sandboxContext, uri } from './support/pool.js';

/**
 * `fs-sandbox serve` as a Codex client sees it. The schemas below restate the reference client's
 * own types (codex-rs/exec-server/src/protocol.rs, and the walk types of its file-system crate)
 * under serde's rules: a field is required unless it is an `Option` or has a default, unknown
 * fields are ignored, enums are camelCase strings with exactly the variants the client knows,
 * integers are integers of the field's width, byte chunks base64. Every reply and notification of
 * a Codex-style session must parse with them: an extension of ours may add a field, never a
 * variant or a type.
 */

const base64 = z.base64();
const u64 = z.number().int().nonnegative();
const i64 = z.number().int();
const i32 = z
  .number()
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);
const pathUri = z.string().startsWith('file:///');
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

const client = {
  shellInfo: z.object({ name: z.string(), path: z.string() }),
  get environmentInfo() {
    return z.object({ shell: this.shellInfo, cwd: optional(pathUri) });
  },
  get initializeResponse() {
    return z.object({ sessionId: z.string(), environmentInfo: this.environmentInfo });
  },
  execResponse: z.object({ processId: z.string() }),
  stream: z.enum(['stdout', 'stderr', 'pty']),
  get readResponse() {
    return z.object({
      chunks: z.array(z.object({ seq: u64, stream: this.stream, chunk: base64 })),
      nextSeq: u64,
      exited: z.boolean(),
      exitCode: optional(i32),
      closed: z.boolean(),
      failure: optional(z.string()),
      sandboxDenied: z.boolean().optional(),
    });
  },
  writeResponse: z.object({ status: z.enum(['accepted', 'unknownProcess', 'stdinClosed', 'starting']) }),
  terminateResponse: z.object({ running: z.boolean() }),
  signalResponse: z.object({}),
  get outputDelta() {
    return z.object({ processId: z.string(), seq: u64, stream: this.stream, chunk: base64 });
  },
  exited: z.object({ processId: z.string(), seq: u64, exitCode: i32 }),
  closed: z.object({ processId: z.string(), seq: u64 }),
  readFileResponse: z.object({ dataBase64: base64 }),
  empty: z.object({}),
  openResponse: z.object({ handleId: z.string() }),
  readBlockResponse: z.object({ chunk: base64, eof: z.boolean() }),
  getMetadataResponse: z.object({
    isDirectory: z.boolean(),
    isFile: z.boolean(),
    isSymlink: z.boolean(),
    size: u64,
    createdAtMs: i64,
    modifiedAtMs: i64,
  }),
  canonicalizeResponse: z.object({ path: pathUri }),
  readDirectoryResponse: z.object({
    entries: z.array(z.object({ fileName: z.string(), isDirectory: z.boolean(), isFile: z.boolean() })),
  }),
  /** `WalkOutcome`: `WalkEntryKind` has two variants, so one more kind fails the whole reply. */
  walkResponse: z.object({
    entries: z.array(z.object({ path: pathUri, kind: z.enum(['directory', 'file']) })),
    errors: z.array(z.object({ path: pathUri, message: z.string() })),
    truncated: z.boolean(),
  }),
  /** A JSON-RPC error as the client's transport reads it: `data` is any JSON value. */
  error: z.object({ code: i64, message: z.string(), data: z.unknown().optional() }),
};

let dir: string;
let work: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-codex-client-'));
  work = join(dir, 'work');
  await mkdir(work);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('fs-sandbox serve through the Codex client types', () => {
  it('a Codex-style handshake (clientName codex-environment): initialize, environment/info and status deserialise', async () => {
    const serve = ServeProcess.start([], { cwd: work });
    const init = await serve.request('initialize', { clientName: 'codex-environment' });
    const info = client.initializeResponse.parse(init.result).environmentInfo;
    expect(info.shell.path.startsWith('/')).toBe(true);
    expect(info.cwd).toBe(uri(work));
    serve.notify('initialized', {});
    expect(client.environmentInfo.parse((await serve.request('environment/info', {})).result)).toEqual(
      client.environmentInfo.parse(info),
    );
    expect((await serve.request('environment/status', {})).result).toEqual({ status: 'ready' });
    await serve.stop();
  });

  it("exec_command's sequence (start with every field the client sends, output deltas, reads, exit) deserialises", async () => {
    const serve = ServeProcess.start([], { cwd: work });
    await serve.request('initialize', { clientName: 'codex-environment' });
    serve.notify('initialized', {});
    const start = await serve.request('process/start', {
      processId: 'exec-1',
      argv: ['/bin/bash', '-lc', 'echo from-bash; echo to-stderr >&2; exit 5'],
      cwd: uri(work),
      envPolicy: { inherit: 'core', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] },
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      pipeStdin: false,
      arg0: null,
      sandbox: sandboxContext({ read: ['/usr', '/bin', '/lib', '/lib64', '/etc'], write: [work] }),
      enforceManagedNetwork: false,
      managedNetwork: null,
    });
    expect(client.execResponse.parse(start.result).processId).toBe('exec-1');
    // The client reads until closed, passing the previous nextSeq - 1 as afterSeq.
    let afterSeq = 0;
    const chunks: Array<z.infer<typeof client.readResponse>['chunks'][number]> = [];
    for (let i = 0; i < 100; i++) {
      const read = client.readResponse.parse(
        (
          await serve.request('process/read', {
            processId: 'exec-1',
            afterSeq,
            maxBytes: 65536,
            waitMs: 1000,
          })
        ).result,
      );
      chunks.push(...read.chunks);
      afterSeq = read.nextSeq - 1;
      if (read.closed) {
        expect([read.exited, read.exitCode, read.failure]).toEqual([true, 5, null]);
        break;
      }
    }
    const text = (stream: string) =>
      chunks
        .filter((c) => c.stream === stream)
        .map((c) => Buffer.from(c.chunk, 'base64').toString())
        .join('');
    expect([text('stdout'), text('stderr')]).toEqual(['from-bash\n', 'to-stderr\n']);
    const notifications = serve.rawLines
      .map((line) => JSON.parse(line) as { method?: string; params?: unknown })
      .filter((message) => message.method !== undefined);
    const parsers: Record<string, z.ZodType> = {
      'process/output': client.outputDelta,
      'process/exited': client.exited,
      'process/closed': client.closed,
    };
    for (const message of notifications)
      (parsers[message.method as string] as z.ZodType).parse(message.params);
    expect(notifications.map((message) => message.method).slice(-2)).toEqual([
      'process/exited',
      'process/closed',
    ]);
    expect(
      client.writeResponse.parse(
        (await serve.request('process/write', { processId: 'exec-1', chunk: 'eA==', writeId: 'w' })).result,
      ),
    ).toEqual({ status: 'stdinClosed' });
    client.terminateResponse.parse(
      (await serve.request('process/terminate', { processId: 'exec-1' })).result,
    );
    client.signalResponse.parse(
      (await serve.request('process/signal', { processId: 'exec-1', signal: 'interrupt' })).result,
    );
    await serve.stop();
  });

  it('every fs method the client calls answers in its types, a walk over dangling and file links included', async () => {
    const tree = join(dir, 'tree');
    await mkdir(join(tree, 'sub'), { recursive: true });
    await writeFile(join(tree, 'a.txt'), 'hello\n');
    await writeFile(join(tree, 'sub', 'b.txt'), 'b\n');
    await symlink('a.txt', join(tree, 'file-link'));
    await symlink('missing', join(tree, 'dangling'));
    await symlink('sub', join(tree, 'dir-link'));
    await symlink('loop', join(tree, 'loop'));
    await mkdir(join(dir, 'elsewhere'), { recursive: true });
    await writeFile(join(dir, 'elsewhere', 'o.txt'), 'o\n');
    await symlink(join(dir, 'elsewhere'), join(tree, 'outside'));
    const serve = ServeProcess.start([], { cwd: work });
    await serve.request('initialize', { clientName: 'codex-environment' });
    serve.notify('initialized', {});
    const sandboxes = [null, sandboxContext({ read: [tree], write: [work] })];
    for (const sandbox of sandboxes) {
      const call = async (method: string, params: Record<string, unknown>) => {
        const reply = await serve.request(method, { ...params, sandbox });
        if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
        return reply.result;
      };
      for (const followDirectorySymlinks of [false, true]) {
        const walk = client.walkResponse.parse(
          await call('fs/walk', {
            path: uri(tree),
            options: { maxDepth: 8, maxDirectories: 100, maxEntries: 1000, followDirectorySymlinks },
          }),
        );
        const names = walk.entries.map((entry) => `${entry.kind}:${entry.path.slice(uri(tree).length + 1)}`);
        // Followed, `outside` leads out of the sandbox's view: there it is a link to nothing.
        const outside = sandbox === null ? ['directory:outside'] : [];
        expect(names).toEqual(
          followDirectorySymlinks
            ? [
                'file:a.txt',
                'directory:dir-link',
                ...outside,
                'directory:sub',
                'file:dir-link/b.txt',
                ...(sandbox === null ? ['file:outside/o.txt'] : []),
              ]
            : ['file:a.txt', 'directory:sub', 'file:sub/b.txt'],
        );
        expect(walk.errors).toEqual([]);
      }
      client.readFileResponse.parse(await call('fs/readFile', { path: uri(join(tree, 'a.txt')) }));
      client.getMetadataResponse.parse(await call('fs/getMetadata', { path: uri(join(tree, 'file-link')) }));
      client.canonicalizeResponse.parse(await call('fs/canonicalize', { path: uri(join(tree, 'dir-link')) }));
      client.readDirectoryResponse.parse(await call('fs/readDirectory', { path: uri(tree) }));
      client.empty.parse(await call('fs/writeFile', { path: uri(join(work, 'w.txt')), dataBase64: 'eA==' }));
      client.empty.parse(await call('fs/createDirectory', { path: uri(join(work, 'd')), recursive: true }));
      client.empty.parse(
        await call('fs/copy', {
          sourcePath: uri(join(work, 'w.txt')),
          destinationPath: uri(join(work, 'c.txt')),
          recursive: false,
        }),
      );
      client.empty.parse(
        await call('fs/remove', { path: uri(join(work, 'd')), recursive: true, force: true }),
      );
      const handleId = `h-${sandbox === null ? 'plain' : 'sandboxed'}`;
      client.openResponse.parse(await call('fs/open', { handleId, path: uri(join(tree, 'a.txt')) }));
      const block = (await serve.request('fs/readBlock', { handleId, offset: 0, len: 4 })).result;
      expect(client.readBlockResponse.parse(block)).toEqual({ chunk: base64Of('hell'), eof: false });
      client.empty.parse((await serve.request('fs/close', { handleId })).result);
      const missing = await serve.request('fs/readFile', { path: uri(join(tree, 'nope')), sandbox });
      expect(client.error.parse(missing.error).code).toBe(-32004);
    }
    expect(await serve.stop()).toBe(0);
  });
});
