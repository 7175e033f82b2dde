import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createBroker, type FsBroker, type HelperLauncher, type LaunchSpec } from '@fs-sandbox/broker';
import type { HelperReply } from '@fs-sandbox/helper';
import type { SandboxContextInput } from '@fs-sandbox/policy';
import fc from 'fast-check';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * A broker reuses the sandbox launch it built for a context while every host read that launch was
 * built from gets the same answer (runner/host-reads.ts). The oracle here is a broker that has
 * never seen the context: after any change to the host, the reusing broker must produce exactly
 * the launch and path guard that one builds from scratch, and it must not rebuild when nothing
 * changed.
 */

let base: string;
let ws: string;
const brokers: FsBroker[] = [];

beforeAll(() => {
  ensureBuilt();
});

beforeEach(async () => {
  base = await mkdtemp('/tmp/fs-sandbox-launch-reuse-');
  ws = join(base, 'ws');
  mkdirSync(join(ws, 'keys'), { recursive: true });
  mkdirSync(join(base, 'other'));
});

afterEach(async () => {
  await Promise.all(brokers.splice(0).map((broker) => broker.close()));
  await rm(base, { recursive: true, force: true });
});

function newBroker(options: Parameters<typeof createBroker>[0] = {}): FsBroker {
  const broker = createBroker({ pool: false, helperRuntime: 'node', ...options });
  brokers.push(broker);
  return broker;
}

/** A write root with a denied path and a deny glob below it (both masked by bwrap when they exist). */
function context(): SandboxContextInput {
  const sandbox = sandboxContext({ write: [join(base, 'root')], deny: [join(base, 'root', 'secret')] });
  (sandbox.permissions as { file_system: { entries: unknown[] } }).file_system.entries.push({
    path: { type: 'glob_pattern', pattern: `${join(base, 'root')}/keys/**/*.key` },
    access: 'deny',
  });
  return sandbox;
}

/** What a launch is, without the object identity: its argv, mounts and guard. */
function shape(prepared: Awaited<ReturnType<FsBroker['prepareSandbox']>>) {
  return JSON.parse(JSON.stringify({ launch: prepared.launch, guard: prepared.guard, plan: prepared.plan }));
}

function replaceFile(path: string, text: string): void {
  rmSync(path, { force: true, recursive: true });
  writeFileSync(path, text);
}

async function fromScratch(sandbox: SandboxContextInput) {
  const broker = newBroker();
  const prepared = await broker.prepareSandbox(sandbox);
  await broker.close();
  return shape(prepared);
}

describe('launch reuse', () => {
  it('reuses the very launch while nothing changed, frozen against callers', async () => {
    symlinkSync('ws', join(base, 'root'));
    const broker = newBroker();
    const first = await broker.prepareSandbox(context());
    // A directory made beside the root changes its parent's link count, which no builder reads
    // (any program making a directory in /tmp would otherwise void every launch under it).
    mkdirSync(join(base, 'sibling'));
    const second = await broker.prepareSandbox(context());
    expect(second).toBe(first);
    expect(Object.isFrozen(second.launch.sandboxArgs)).toBe(true);
    expect(() => (second.launch.sandboxArgs as string[]).push('--bind')).toThrow(TypeError);
  });

  // Each step changes what the launch is built from; the reusing broker must then match a fresh one.
  const steps = {
    'secret created': () => replaceFile(join(ws, 'secret'), 'denied'),
    'secret removed': () => rmSync(join(ws, 'secret'), { force: true, recursive: true }),
    'secret made a directory': () => {
      rmSync(join(ws, 'secret'), { force: true, recursive: true });
      mkdirSync(join(ws, 'secret', 'inner'), { recursive: true });
    },
    'hard link to secret': () => {
      if (statSync(join(ws, 'secret'), { throwIfNoEntry: false })?.isFile() && !existsSync(join(ws, 'alias')))
        linkSync(join(ws, 'secret'), join(ws, 'alias'));
    },
    'key file created deep': () => {
      mkdirSync(join(ws, 'keys', 'a', 'b'), { recursive: true });
      writeFileSync(join(ws, 'keys', 'a', 'b', 'id.key'), 'k');
    },
    'key file renamed away': () => {
      if (existsSync(join(ws, 'keys', 'a', 'b', 'id.key')))
        renameSync(join(ws, 'keys', 'a', 'b', 'id.key'), join(ws, 'keys', 'a', 'b', 'id.txt'));
    },
    '.git pointer to other': () => replaceFile(join(ws, '.git'), `gitdir: ${join(base, 'other')}\n`),
    '.git pointer rewritten': () => replaceFile(join(ws, '.git'), 'gitdir: ../elsewhere\n'),
    '.git made a directory': () => {
      rmSync(join(ws, '.git'), { force: true, recursive: true });
      mkdirSync(join(ws, '.git'));
    },
    'root re-pointed to other': () => {
      rmSync(join(base, 'root'), { force: true, recursive: true });
      symlinkSync('other', join(base, 'root'));
    },
    'root re-pointed to ws': () => {
      rmSync(join(base, 'root'), { force: true, recursive: true });
      symlinkSync('ws', join(base, 'root'));
    },
    'root made a real directory': () => {
      rmSync(join(base, 'root'), { force: true, recursive: true });
      mkdirSync(join(base, 'root'));
    },
    'an unrelated file written': () => writeFileSync(join(ws, 'notes.txt'), String(Math.random())),
  } as const;
  const stepNames = Object.keys(steps) as Array<keyof typeof steps>;

  it('after any sequence of host changes, builds exactly what a broker that never saw the context builds', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...stepNames), { minLength: 1, maxLength: 6 }),
        async (names) => {
          run += 1;
          // Each run starts from the same host: root -> ws, nothing else.
          for (const entry of ['root', 'ws', 'other', 'elsewhere'])
            rmSync(join(base, entry), { recursive: true, force: true });
          mkdirSync(join(ws, 'keys'), { recursive: true });
          mkdirSync(join(base, 'other'));
          symlinkSync('ws', join(base, 'root'));
          const sandbox = context();
          const reusing = newBroker();
          await reusing.prepareSandbox(sandbox);
          for (const name of names) {
            steps[name]();
            expect(
              shape(await reusing.prepareSandbox(sandbox)),
              `run ${run}, after ${names.join(' → ')}`,
            ).toEqual(await fromScratch(sandbox));
          }
          await reusing.close();
        },
      ),
      { numRuns: 40, seed: 20261201 },
    );
  });

  it('rebuilds every time, never keeps, a launch built from more reads than the bound', async () => {
    symlinkSync('ws', join(base, 'root'));
    // The deny glob's scan looks at each of these: over a thousand reads to witness.
    for (let i = 0; i < 1100; i++) writeFileSync(join(ws, 'keys', `file-${i}.txt`), '');
    const broker = newBroker();
    const first = await broker.prepareSandbox(context());
    const second = await broker.prepareSandbox(context());
    expect(second).not.toBe(first);
    expect(shape(second)).toEqual(shape(first));
  });

  it('masks a denied file created after the launch was first built, in the sandbox itself', async () => {
    symlinkSync('ws', join(base, 'root'));
    // Pre-check off: what refuses is the sandbox the reused (or rebuilt) launch makes.
    const broker = newBroker({ precheck: false, pool: { size: 2, perKey: 1, idleMs: 60_000 } });
    const sandbox = context();
    await broker.call('fs/getMetadata', { path: uri(join(base, 'root')), sandbox });
    writeFileSync(join(ws, 'keys', 'late.key'), 'private key');
    const { launch } = await broker.prepareSandbox(sandbox);
    expect(launch.sandboxArgs.join(' ')).toContain(
      `--ro-bind /dev/null ${join(base, 'root', 'keys', 'late.key')}`,
    );
    await expect(
      broker.call('fs/readFile', { path: uri(join(base, 'root', 'keys', 'late.key')), sandbox }),
    ).rejects.toMatchObject({ kind: 'permission_denied' });
    expect(readFileSync(join(ws, 'keys', 'late.key'), 'utf8')).toBe('private key');
    expect(dirname(launch.sandboxProgram)).toBe('/usr/bin');
  });

  describe('a read starts on the last launch and asks the host while its helper answers', () => {
    const lateKey = () => join(base, 'root', 'keys', 'late.key');
    const masksLateKey = (launch: LaunchSpec) =>
      launch.sandboxArgs.join(' ').includes(`/dev/null ${lateKey()}`);

    /** A launcher that runs nothing: it says which view a launch would show, and logs each run. */
    function viewLauncher() {
      const runs: { launch: LaunchSpec; method: string; signal: AbortSignal | undefined }[] = [];
      const launcher: HelperLauncher = async (launch, request, options) => {
        runs.push({ launch, method: request.operation, signal: options.signal });
        options.onSent?.();
        const view = masksLateKey(launch) ? 'the rebuilt view' : 'the view before late.key';
        const reply = {
          status: 'ok',
          payload: {
            operation: request.operation,
            response: request.operation === 'fs/readFile' ? { dataBase64: '' } : {},
          },
          ...(request.operation === 'fs/readFile'
            ? { binary: { field: 'dataBase64', data: Buffer.from(view) } }
            : {}),
        };
        return reply as HelperReply;
      };
      return { runs, launcher };
    }

    it('kills the run on a launch the host has changed since, unanswered, and answers from the rebuilt one', async () => {
      symlinkSync('ws', join(base, 'root'));
      writeFileSync(join(ws, 'notes.txt'), 'notes');
      const { runs, launcher } = viewLauncher();
      const broker = newBroker({ precheck: false, launcher });
      const sandbox = context();
      await broker.call('fs/readFile', { path: uri(join(base, 'root', 'notes.txt')), sandbox });
      writeFileSync(join(ws, 'keys', 'late.key'), 'private key');
      const { dataBase64 } = await broker.call('fs/readFile', { path: uri(lateKey()), sandbox });
      expect(Buffer.from(dataBase64).toString()).toBe('the rebuilt view');
      expect(runs.map((run) => [masksLateKey(run.launch), run.signal?.aborted ?? false])).toEqual([
        [false, false],
        // Started on the last launch, then killed: the host reads no longer held.
        [false, true],
        [true, false],
      ]);
    });

    it('answers from the last launch while the host is unchanged: one run, not killed', async () => {
      symlinkSync('ws', join(base, 'root'));
      writeFileSync(join(ws, 'keys', 'late.key'), 'private key');
      const { runs, launcher } = viewLauncher();
      const broker = newBroker({ precheck: false, launcher });
      const sandbox = context();
      for (let i = 0; i < 3; i++)
        await broker.call('fs/getMetadata', { path: uri(join(base, 'root')), sandbox });
      expect(runs).toHaveLength(3);
      expect(new Set(runs.map((run) => run.launch)).size).toBe(1);
      expect(runs.every((run) => run.signal?.aborted !== true)).toBe(true);
    });

    it('never starts a write on the last launch: its one run is already under the rebuilt one', async () => {
      symlinkSync('ws', join(base, 'root'));
      const { runs, launcher } = viewLauncher();
      const broker = newBroker({ precheck: false, launcher });
      const sandbox = context();
      await broker.call('fs/getMetadata', { path: uri(join(base, 'root')), sandbox });
      writeFileSync(join(ws, 'keys', 'late.key'), 'private key');
      await broker.call('fs/writeFile', {
        path: uri(join(base, 'root', 'out.txt')),
        dataBase64: 'eA==',
        sandbox,
      });
      expect(runs.map((run) => [run.method, masksLateKey(run.launch)])).toEqual([
        ['fs/getMetadata', false],
        ['fs/writeFile', true],
      ]);
    });

    it('with real warm helpers: the spare of the old launch is dropped, the late file refused, the pool serves on', async () => {
      symlinkSync('ws', join(base, 'root'));
      writeFileSync(join(ws, 'notes.txt'), 'notes');
      const broker = newBroker({
        precheck: false,
        helperRuntime: 'auto',
        pool: { size: 2, perKey: 1, idleMs: 60_000 },
      });
      const sandbox = context();
      const notes = { path: uri(join(base, 'root', 'notes.txt')), sandbox };
      expect(Buffer.from((await broker.call('fs/readFile', notes)).dataBase64).toString()).toBe('notes');
      writeFileSync(join(ws, 'keys', 'late.key'), 'private key');
      for (let i = 0; i < 3; i++) {
        await expect(broker.call('fs/readFile', { path: uri(lateKey()), sandbox })).rejects.toMatchObject({
          kind: 'permission_denied',
        });
        expect(Buffer.from((await broker.call('fs/readFile', notes)).dataBase64).toString()).toBe('notes');
      }
      expect(readFileSync(join(ws, 'keys', 'late.key'), 'utf8')).toBe('private key');
    });
  });
});
