import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { type CliUser, callMethod, USERS } from './support/cli.js';
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
 * The red-team finding: a misspelled `sandbox` key was ignored, so the request ran with no sandbox
 * and wrote outside the workspace. Through the real `fs-sandbox call` and `fs-sandbox serve --listen
 * stdio`, as root and as nobody (who owns the whole fixture, so only the sandbox could stop a write
 * to `outside`), such requests are now refused with invalid_params before anything runs, and
 * `--require-sandbox` refuses every request that would run unsandboxed.
 */

beforeAll(() => {
  ensureBuilt();
});

const PWNED = 'cHduZWQ=';

interface Refusal {
  code: number;
  message: string;
  errorKind: string;
}

const unknownField = (key: string, method: string): Refusal => ({
  code: -32602,
  message: `unknown field \`${key}\` in ${method} params; did you mean \`sandbox\`?`,
  errorKind: 'invalid_params',
});

const requiredSandbox = (why: string): Refusal => ({
  code: -32600,
  message:
    `refused: this broker requires a sandbox, and the request ${why}; ` +
    'send a `sandbox` whose `permissions` are `managed` with a `restricted` `file_system` that does not grant `root` write',
  errorKind: 'permission_denied',
});

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;
  let before: TreeSnapshot;

  beforeEach(async () => {
    fixture = await createFixture(user);
    before = await snapshotTree(fixture.base);
  });

  afterEach(async () => {
    await removeFixture(fixture);
  });

  const outsideFile = () => join(fixture.outside, 'pwned.txt');

  /** Each request with a misspelled sandbox key, aimed outside the workspace the context grants. */
  function typoRequests(): Array<{ method: string; params: Record<string, unknown>; refusal: Refusal }> {
    const sandbox = workspaceContext(fixture);
    return [
      ...['sandBox', 'Sandbox'].map((key) => ({
        method: 'fs/writeFile',
        params: { path: uri(outsideFile()), dataBase64: PWNED, [key]: sandbox },
        refusal: unknownField(key, 'fs/writeFile'),
      })),
      {
        method: 'fs/remove',
        params: { path: uri(join(fixture.outside, 'secret.txt')), force: false, sandBox: sandbox },
        refusal: unknownField('sandBox', 'fs/remove'),
      },
      {
        method: 'fs/copy',
        params: {
          sourcePath: uri(join(fixture.ws, 'hello.txt')),
          destinationPath: uri(join(fixture.outside, 'planted.txt')),
          recursive: false,
          Sandbox: sandbox,
        },
        refusal: unknownField('Sandbox', 'fs/copy'),
      },
    ];
  }

  /** Requests that would run unsandboxed, each with the reason `--require-sandbox` gives. */
  function unsandboxedRequests(): Array<{ what: string; params: Record<string, unknown>; refusal: Refusal }> {
    const write = { path: uri(join(fixture.ws, 'new.txt')), dataBase64: PWNED };
    const none = 'has no sandbox context (`sandbox` is missing or null)';
    return [
      { what: 'no sandbox', params: write, refusal: requiredSandbox(none) },
      { what: 'sandbox null', params: { ...write, sandbox: null }, refusal: requiredSandbox(none) },
      {
        what: 'disabled',
        params: { ...write, sandbox: { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' } },
        refusal: requiredSandbox('turns the sandbox off (`permissions.type` is `disabled`)'),
      },
      {
        what: 'unrestricted',
        params: {
          ...write,
          sandbox: {
            permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network: 'restricted' },
            windowsSandboxLevel: 'disabled',
          },
        },
        refusal: requiredSandbox('does not restrict the file system (`file_system.type` is `unrestricted`)'),
      },
    ];
  }

  async function expectUntouched(label: string): Promise<void> {
    expect(diffTrees(before, await snapshotTree(fixture.base)), label).toEqual([]);
    expect(existsSync(outsideFile()), label).toBe(false);
  }

  function expectRefusal(error: Refusal | undefined, refusal: Refusal, label: string): void {
    expect({ code: error?.code, message: error?.message, errorKind: error?.errorKind }, label).toEqual(
      refusal,
    );
  }

  const wireRefusal = (reply: WireReply): Refusal | undefined =>
    reply.error && {
      code: reply.error.code,
      message: reply.error.message,
      errorKind: reply.error.data.errorKind,
    };

  describe('fs-sandbox call', () => {
    it('refuses a misspelled sandbox key with invalid_params and writes nothing anywhere', async () => {
      for (const { method, params, refusal } of typoRequests()) {
        const label = `${method} ${Object.keys(params).join(',')}`;
        const outcome = await callMethod(method, params, { user, env: cliEnv(fixture) });
        expect(outcome.code, label).toBe(1);
        expectRefusal(
          outcome.error && { ...outcome.error, errorKind: outcome.error.data.errorKind },
          refusal,
          label,
        );
        await expectUntouched(label);
      }
    });

    it('refuses the same write, correctly spelled, inside the sandbox it names', async () => {
      const outcome = await callMethod(
        'fs/writeFile',
        { path: uri(outsideFile()), dataBase64: PWNED, sandbox: workspaceContext(fixture) },
        { user, env: cliEnv(fixture) },
      );
      expect(outcome.error?.data.errorKind).toBe('permission_denied');
      await expectUntouched('spelled sandbox');
    });

    it('--require-sandbox refuses every request that would run unsandboxed, and runs a restricted one', async () => {
      for (const { what, params, refusal } of unsandboxedRequests()) {
        const outcome = await callMethod('fs/writeFile', params, {
          user,
          env: cliEnv(fixture),
          requireSandbox: true,
        });
        expect(outcome.code, what).toBe(1);
        expectRefusal(
          outcome.error && { ...outcome.error, errorKind: outcome.error.data.errorKind },
          refusal,
          what,
        );
        await expectUntouched(what);
      }
      const sandboxed = await callMethod(
        'fs/writeFile',
        { path: uri(join(fixture.ws, 'new.txt')), dataBase64: PWNED, sandbox: workspaceContext(fixture) },
        { user, env: cliEnv(fixture), requireSandbox: true },
      );
      expect(sandboxed.result).toEqual({});
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([
        expect.stringMatching(/^added ws\/new\.txt \(file /),
      ]);
    });
  });

  describe('fs-sandbox serve --listen stdio', () => {
    async function session(args: string[], run: (served: ServeProcess) => Promise<void>): Promise<void> {
      const served = ServeProcess.start(args, { user, env: cliEnv(fixture) });
      try {
        await served.handshake();
        await run(served);
      } finally {
        expect(await served.stop()).toBe(0);
      }
    }

    it('refuses a misspelled sandbox key with invalid_params and writes nothing anywhere', async () => {
      await session([], async (served) => {
        for (const { method, params, refusal } of typoRequests()) {
          const label = `${method} ${Object.keys(params).join(',')}`;
          expectRefusal(wireRefusal(await served.request(method, params)), refusal, label);
          await expectUntouched(label);
        }
        const open = await served.request('fs/open', {
          handleId: 'h',
          path: uri(join(fixture.outside, 'secret.txt')),
          sandBox: workspaceContext(fixture),
        });
        expectRefusal(wireRefusal(open), unknownField('sandBox', 'fs/open'), 'fs/open');
        const read = await served.request('fs/readBlock', { handleId: 'h', offset: 0, len: 64 });
        expect(read.error?.data.errorKind).toBe('not_found');
      });
    });

    it('a request without params names the field it lacks, for a helper method as for a server method', async () => {
      await session([], async (served) => {
        for (const [method, field] of [
          ['fs/readFile', 'path'],
          ['fs/copy', 'sourcePath'],
          ['fs/close', 'handleId'],
        ] as const) {
          served.send(JSON.stringify({ jsonrpc: '2.0', id: method, method }));
          const reply = await served.replyFor(method);
          expect(reply.error, method).toEqual({
            code: -32602,
            message: `missing field \`${field}\``,
            data: { field, errorKind: 'invalid_params' },
          });
        }
      });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });

    it('refuses params nested past the depth limit with invalid_params, and the connection goes on', async () => {
      await session([], async (served) => {
        const context = workspaceContext(fixture) as { permissions: { file_system: { entries: unknown[] } } };
        for (const depth of [100, 200_000]) {
          // Unknown special kinds keep their extra keys as sent: the one place a value may nest.
          // The message is written as text: serialising 200 000 levels would overflow here too.
          const deep = structuredClone(context);
          deep.permissions.file_system.entries.push({
            path: { type: 'special', value: { kind: 'from-the-future', extra: 'NESTED' } },
            access: 'read',
          });
          const id = `deep-${depth}`;
          const message = JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'fs/writeFile',
            params: { path: uri(join(fixture.ws, 'deep.txt')), dataBase64: 'aGk=', sandbox: deep },
          }).replace('"NESTED"', `${'['.repeat(depth)}"x"${']'.repeat(depth)}`);
          served.send(message);
          expect((await served.replyFor(id)).error, String(depth)).toMatchObject({
            code: -32602,
            message: 'fs/writeFile params nest deeper than 64 levels',
            data: { errorKind: 'invalid_params' },
          });
        }
        const ok = await served.request('fs/getMetadata', {
          path: uri(fixture.ws),
          sandbox: workspaceContext(fixture),
        });
        expect(ok.result).toMatchObject({ isDirectory: true });
      });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });

    it('--require-sandbox refuses every request that would run unsandboxed, and runs a restricted one', async () => {
      await session(['--require-sandbox'], async (served) => {
        for (const { what, params, refusal } of unsandboxedRequests()) {
          expectRefusal(wireRefusal(await served.request('fs/writeFile', params)), refusal, what);
          await expectUntouched(what);
        }
        const open = await served.request('fs/open', {
          handleId: 'h',
          path: uri(join(fixture.outside, 'secret.txt')),
        });
        expectRefusal(
          wireRefusal(open),
          requiredSandbox('has no sandbox context (`sandbox` is missing or null)'),
          'fs/open',
        );
        const sandboxed = await served.request('fs/writeFile', {
          path: uri(join(fixture.ws, 'new.txt')),
          dataBase64: PWNED,
          sandbox: workspaceContext(fixture),
        });
        expect(sandboxed.result).toEqual({});
      });
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([
        expect.stringMatching(/^added ws\/new\.txt \(file /),
      ]);
    });
  });
});
