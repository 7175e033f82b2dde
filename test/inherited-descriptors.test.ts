import { execFileSync, spawn } from 'node:child_process';
import { lchown, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';
import { ensureBuilt, REPO } from './support/build.js';
import {
  type CliUser,
  callMethod,
  cliCommand,
  NOBODY_UID,
  PRECHECK_MODES,
  USERS,
  withInheritedDescriptors,
} from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { HELPER_RUNTIMES } from './support/helper-runtimes.js';
import { until, waitingHelpers } from './support/pool.js';
import { diffTrees, snapshotTree, type TreeSnapshot } from './support/tree-snapshot.js';

/**
 * Descriptors that the broker's own parent left open without close-on-exec must not reach the
 * helper: the sandbox's mounts do not apply to them. The CLI is started by a shell holding fd 200
 * on a file inside a denied directory and fd 201 on a directory outside every root, through the
 * one-shot `fs-sandbox call` (pre-check on and off) and through `fs-sandbox serve --no-precheck`
 * (a cold helper, then a warm one from the pool), as root and as nobody. Reading fd 200 or writing below fd 201,
 * named directly or through a planted `r -> /` link inside the workspace, must fail, the denied
 * content never appear, and the host tree stay unchanged.
 */

beforeAll(() => {
  ensureBuilt();
});

const DENIED_CONTENT = 'denied directory content';

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;
  let before: TreeSnapshot;
  let descriptors: Record<number, string>;

  beforeEach(async () => {
    fixture = await createFixture(user);
    const planted = join(fixture.ws, 'r');
    await symlink('/', planted);
    if (user === 'nobody') await lchown(planted, NOBODY_UID, NOBODY_UID);
    descriptors = { 200: join(fixture.ws, 'denied-dir', 'secret2.txt'), 201: fixture.outside };
    before = await snapshotTree(fixture.base);
  });

  afterEach(async () => {
    await removeFixture(fixture);
  });

  /** Every way the report used the descriptors, spelled directly and through the planted link. */
  function attacks(): Array<[method: string, params: Record<string, unknown>]> {
    const viaLink = join(fixture.ws, 'r');
    return [
      ['fs/readFile', { path: 'file:///proc/self/fd/200' }],
      ['fs/readFile', { path: uri(join(viaLink, 'proc/self/fd/200')) }],
      ['fs/writeFile', { path: 'file:///proc/self/fd/201/pwned', dataBase64: 'cHdu' }],
      ['fs/writeFile', { path: uri(join(viaLink, 'proc/self/fd/201/pwned')), dataBase64: 'cHdu' }],
      ['fs/createDirectory', { path: uri(join(viaLink, 'proc/self/fd/201/made')), recursive: false }],
    ];
  }

  async function expectUntouched(label: string): Promise<void> {
    expect(diffTrees(before, await snapshotTree(fixture.base)), label).toEqual([]);
  }

  it('hands the descriptors to what the shell starts (the attack is real)', () => {
    const command = withInheritedDescriptors({ file: 'cat', args: ['/proc/self/fd/200'] }, descriptors);
    expect(execFileSync(command.file, command.args, { encoding: 'utf8' })).toContain(DENIED_CONTENT);
  });

  describe.each(PRECHECK_MODES)('fs-sandbox call, %s', (_mode, precheck) => {
    it('the helper sees no inherited descriptor', async () => {
      const sandbox = workspaceContext(fixture);
      const options = { user, env: cliEnv(fixture), precheck, descriptors };
      const hello = await callMethod(
        'fs/readFile',
        { path: uri(join(fixture.ws, 'hello.txt')), sandbox },
        options,
      );
      expect(hello.code, hello.run.stderr).toBe(0);
      for (const [method, params] of attacks()) {
        const label = `${method} ${JSON.stringify(params)}`;
        const outcome = await callMethod(method, { ...params, sandbox }, options);
        expect(outcome.code, label).toBe(1);
        expect(['internal_error', 'helper_failed'], label).not.toContain(outcome.error?.data.errorKind);
        expect(outcome.run.stdout + outcome.run.stderr, label).not.toContain(DENIED_CONTENT);
        expect(outcome.run.stdout, label).not.toContain(
          Buffer.from(DENIED_CONTENT).toString('base64').slice(0, 16),
        );
        await expectUntouched(label);
      }
    });
  });

  it('fs-sandbox serve: neither a cold nor a warm helper sees an inherited descriptor', async () => {
    const command = withInheritedDescriptors(
      cliCommand(user, ['serve', '--listen', 'stdio', '--no-precheck']),
      descriptors,
    );
    const served = new ServeProcess(
      spawn(command.file, command.args, { cwd: REPO, env: cliEnv(fixture), stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    try {
      await served.handshake();
      const sandbox = workspaceContext(fixture);
      const check = async (reply: WireReply, label: string) => {
        expect(reply.error, label).toBeDefined();
        expect(['internal_error', 'helper_failed'], label).not.toContain(reply.error?.data.errorKind);
        expect(JSON.stringify(reply), label).not.toContain(
          Buffer.from(DENIED_CONTENT).toString('base64').slice(0, 16),
        );
        await expectUntouched(label);
      };
      for (const round of ['cold', 'warm']) {
        for (const [method, params] of attacks()) {
          // Each request takes the spare its shape keeps warm; wait for it so none runs cold.
          if (round === 'warm') await until(() => waitingHelpers(fixture.base).length > 0, 'a warm spare');
          const label = `${round} ${method} ${JSON.stringify(params)}`;
          await check(await served.request(method, { ...params, sandbox }), label);
        }
      }
      const hello = await served.request('fs/readFile', {
        path: uri(join(fixture.ws, 'hello.txt')),
        sandbox,
      });
      expect(hello.result, served.stderr).toBeDefined();
      expect(served.stderr).not.toContain(DENIED_CONTENT);
    } finally {
      await served.stop();
    }
  });
});

/**
 * The library in a program that holds the descriptors itself (nothing closed them, as the CLI does
 * at start): every helper it spawns, cold and from the pool, under each helper runtime installed
 * here, must get /dev/null at those numbers. Bun marks inherited descriptors close-on-exec as it
 * starts, so the Bun helper alone could not tell them from its own; the broker covers them at spawn.
 */
describe.each(HELPER_RUNTIMES)(
  'the library under the %s helper, in a process holding the descriptors',
  (runtime) => {
    let fixture: Fixture;

    beforeEach(async () => {
      fixture = await createFixture('root');
    });

    afterEach(async () => {
      await removeFixture(fixture);
    });

    it('no helper, cold or warm, can read fd 200 or write below fd 201', async () => {
      const script = join(fixture.base, 'library-user.mjs');
      const secret = join(fixture.ws, 'denied-dir', 'secret2.txt');
      await writeFile(
        script,
        `import { createBroker } from ${JSON.stringify(pathToFileURL(join(REPO, 'packages/broker/dist/index.js')).href)};
const sandbox = ${JSON.stringify(workspaceContext(fixture))};
const attacks = [
  ['fs/readFile', { path: 'file:///proc/self/fd/200' }],
  ['fs/writeFile', { path: 'file:///proc/self/fd/201/pwned', dataBase64: 'cHdu' }],
  ['fs/createDirectory', { path: 'file:///proc/self/fd/201/made', recursive: false }],
];
const outcomes = [];
for (const pool of [false, { size: 2, perKey: 2, idleMs: 60000 }]) {
  // No pre-check: the helper itself must meet each attack.
  const broker = createBroker({ pool, precheck: false, helperRuntime: ${JSON.stringify(runtime)} });
  // The first call starts the pool's spares; the attacks that follow run in warm helpers.
  await broker.call('fs/readFile', { path: ${JSON.stringify(uri(join(fixture.ws, 'hello.txt')))}, sandbox });
  for (const [method, params] of attacks) {
    try {
      const result = await broker.call(method, { ...params, sandbox });
      outcomes.push({ pool: pool !== false, method, ok: true, text: result.dataBase64 ? Buffer.from(result.dataBase64).toString() : '' });
    } catch (error) {
      outcomes.push({ pool: pool !== false, method, ok: false, kind: error.kind });
    }
    // The next attack runs in a warm helper: wait (20 ms at a time, 10 s at most) for the spare.
    for (const deadline = Date.now() + 10_000; pool !== false && broker.poolStats().warm === 0; ) {
      if (Date.now() > deadline) throw new Error('no warm spare within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  await broker.close();
}
process.stdout.write(JSON.stringify(outcomes));
`,
      );
      const before = await snapshotTree(fixture.base);
      const command = withInheritedDescriptors(
        { file: process.execPath, args: [script] },
        { 200: secret, 201: fixture.outside },
      );
      const stdout = execFileSync(command.file, command.args, {
        cwd: join(REPO, 'packages', 'broker'),
        env: cliEnv(fixture),
        encoding: 'utf8',
      });
      const outcomes = JSON.parse(stdout) as Array<{ ok: boolean; kind?: string; text?: string }>;
      expect(outcomes).toHaveLength(6);
      for (const outcome of outcomes) {
        expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
        expect(['internal_error', 'helper_failed']).not.toContain(outcome.kind);
      }
      expect(stdout).not.toContain(DENIED_CONTENT);
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    });
  },
);

describe('the library with a descriptor to cover near its open-files limit', () => {
  it('refuses each call, typed, and keeps running (a spawn there would fail or crash the process)', () => {
    const script = `import { createBroker } from ${JSON.stringify(pathToFileURL(join(REPO, 'packages/broker/dist/index.js')).href)};
const outcomes = [];
const messages = new Set();
for (const pool of [false, undefined]) {
  const broker = createBroker({ pool });
  for (let i = 0; i < 2; i++) {
    try {
      await broker.call('fs/getMetadata', { path: 'file:///tmp', sandbox: ${JSON.stringify({ permissions: { type: 'managed', file_system: { type: 'restricted', entries: [{ path: { type: 'special', value: { kind: 'root' } }, access: 'read' }] }, network: 'restricted' } })} });
      outcomes.push('ok');
    } catch (error) {
      outcomes.push(error.kind);
      messages.add(error.message);
    }
  }
  await broker.close();
}
process.stdout.write(JSON.stringify({ outcomes, messages: [...messages] }));
`;
    const stdout = execFileSync(
      'bash',
      [
        '--norc',
        '-c',
        // 200 too, far below the limit: covered as ever, and not what the refusal names.
        'ulimit -n 1024; exec 1020</dev/null 200</dev/null; exec "$@"',
        'bash',
        process.execPath,
        '--input-type=module',
        '-e',
        script,
      ],
      { encoding: 'utf8' },
    );
    const { outcomes, messages } = JSON.parse(stdout);
    expect(outcomes).toEqual(Array(4).fill('sandbox_unavailable'));
    // What to act on: the descriptor near the limit, not every one this process passes on.
    expect(messages).toEqual([
      'this process holds descriptor 1020 without close-on-exec, too close to its open-files limit (1024) to be kept from a sandboxed process; close it, open it with O_CLOEXEC, or raise the limit (ulimit -n)',
    ]);
  });
});
