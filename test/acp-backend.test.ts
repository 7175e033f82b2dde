import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agent, client, methods, ndJsonStream, RequestError } from '@agentclientprotocol/sdk';
import { createBroker } from '@fs-sandbox/broker';
import { ACP_FILE_SYSTEM_CAPABILITIES, withAcpFileSystem } from '@fs-sandbox/broker/acp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './fixtures/conformance/serve-process.js';
import { createFixture, type Fixture, removeFixture, workspaceContext } from './support/fixture.js';

/**
 * The ACP file-system backend (`@fs-sandbox/broker/acp`) between an ACP agent and client of the
 * SDK, connected by its ndjson streams over in-memory pipes, the broker running real bwrap: what
 * the agent reads and writes through `fs/read_text_file` / `fs/write_text_file` is bounded by the
 * sandbox, and refusals reach the agent as request errors that keep the error kind.
 */

let fixture: Fixture;
const broker = createBroker();

beforeAll(async () => {
  fixture = await createFixture('root');
  await writeFile(join(fixture.ws, 'lines.txt'), 'one\ntwo\nthree\nfour\n');
});

afterAll(async () => {
  await broker.close();
  if (fixture) await removeFixture(fixture);
});

/** An editor (ACP client) whose file system is the broker, and an agent that calls it. */
async function asAgent<T>(
  work: (request: (method: string, params: unknown) => Promise<unknown>) => Promise<T>,
) {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const editor = withAcpFileSystem(client({ name: 'test-editor' }), {
    broker,
    sandbox: (sessionId) => (sessionId === 'ws' ? workspaceContext(fixture) : readOnlyContext()) as never,
  });
  const connection = editor.connect(ndJsonStream(toAgent.writable, toClient.readable));
  try {
    return await agent({ name: 'test-agent' }).connectWith(
      ndJsonStream(toClient.writable, toAgent.readable),
      (context) => work((method, params) => context.request(method, params)),
    );
  } finally {
    connection.close();
  }
}

function readOnlyContext() {
  const context = workspaceContext(fixture) as {
    permissions: { file_system: { entries: Array<{ access: string }> } };
  };
  const entries = context.permissions.file_system.entries.map((entry) =>
    entry.access === 'write' ? { ...entry, access: 'read' } : entry,
  );
  return {
    ...context,
    permissions: { ...context.permissions, file_system: { type: 'restricted', entries } },
  };
}

describe('the ACP file-system backend', () => {
  it('advertises the fs capability the client puts in initialize', () => {
    expect(ACP_FILE_SYSTEM_CAPABILITIES).toEqual({ fs: { readTextFile: true, writeTextFile: true } });
  });

  it('reads a window of lines and writes a file through the sandbox', async () => {
    const lines = join(fixture.ws, 'lines.txt');
    const written = join(fixture.ws, 'from-agent.txt');
    const [window, whole] = await asAgent(async (request) => [
      await request(methods.client.fs.readTextFile, { sessionId: 'ws', path: lines, line: 2, limit: 2 }),
      await request(methods.client.fs.readTextFile, { sessionId: 'ws', path: lines }),
      await request(methods.client.fs.writeTextFile, { sessionId: 'ws', path: written, content: 'héllo\n' }),
    ]);
    expect(window).toEqual({ content: 'two\nthree\n' });
    expect(whole).toEqual({ content: 'one\ntwo\nthree\nfour\n' });
    expect(await readFile(written, 'utf8')).toBe('héllo\n');
  });

  it('gives the agent the broker’s refusals as request errors with the error kind, and nothing changes', async () => {
    const outcome = (promise: Promise<unknown>) =>
      promise.then(
        () => ({ ok: true }),
        (error: unknown) => ({
          isRequestError: error instanceof RequestError || (error as { code?: unknown }).code !== undefined,
          code: (error as RequestError).code,
          kind: ((error as RequestError).data as { errorKind?: string } | undefined)?.errorKind,
        }),
      );
    const results = await asAgent(async (request) => [
      await outcome(
        request(methods.client.fs.readTextFile, {
          sessionId: 'ws',
          path: join(fixture.outside, 'secret.txt'),
        }),
      ),
      await outcome(
        request(methods.client.fs.readTextFile, { sessionId: 'ws', path: join(fixture.ws, 'denied.txt') }),
      ),
      await outcome(
        request(methods.client.fs.writeTextFile, {
          sessionId: 'ws',
          path: join(fixture.outside, 'x.txt'),
          content: 'x',
        }),
      ),
      await outcome(
        request(methods.client.fs.writeTextFile, {
          sessionId: 'ro',
          path: join(fixture.ws, 'hello.txt'),
          content: 'x',
        }),
      ),
      await outcome(
        request(methods.client.fs.readTextFile, { sessionId: 'ws', path: join(fixture.ws, 'missing.txt') }),
      ),
    ]);
    expect(results).toEqual([
      { isRequestError: true, code: -32600, kind: 'permission_denied' },
      { isRequestError: true, code: -32600, kind: 'permission_denied' },
      { isRequestError: true, code: -32600, kind: 'permission_denied' },
      { isRequestError: true, code: -32600, kind: 'permission_denied' },
      { isRequestError: true, code: -32004, kind: 'not_found' },
    ]);
    expect(await readFile(join(fixture.ws, 'hello.txt'), 'utf8')).toBe('hello sandbox\n');
    await expect(readFile(join(fixture.outside, 'x.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('runs the README example client as written', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'fs-sandbox-acp-example-'));
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['examples/acp-file-system.mjs', workspace],
        {
          cwd: REPO_ROOT,
        },
      );
      expect(stdout).toBe(
        'client capabilities: {"fs":{"readTextFile":true,"writeTextFile":true}}\n' +
          'line 2 of NOTES.md: written in a sandbox\n' +
          'outside the workspace: permission_denied\n',
      );
      expect(await readFile(join(workspace, 'NOTES.md'), 'utf8')).toBe('# notes\nwritten in a sandbox\n');
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});
