import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createBroker, type FsBroker, type LaunchSpec } from '@fs-sandbox/broker';
import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import type { PathGuard, SandboxContextInput } from '@fs-sandbox/policy';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { probeFreshness } from '../packages/broker/src/pool/freshness-probe.js';
import { HelperProcess } from '../packages/broker/src/runner/helper-process.js';
import { ensureBuilt } from './support/build.js';
import { base64, sandboxContext, until, uri, waitingHelpers, waitingHelpersUnder } from './support/pool.js';

/**
 * A warm helper's bind mounts pin what each path meant when it started. These tests change the
 * host under a waiting spare (real bwrap) and show that the request is answered as a fresh sandbox
 * would answer it, never from the old view. Each hazard is also shown for real on a helper that
 * skips the check in question, so none of these tests could pass without the check.
 */

let base: string;
let ws: string;
let broker: FsBroker;
const stray: HelperProcess[] = [];

beforeAll(() => {
  ensureBuilt();
});

beforeEach(async () => {
  base = await mkdtemp('/tmp/fs-sandbox-pool-fresh-');
  ws = join(base, 'ws');
  mkdirSync(ws);
});

afterEach(async () => {
  await broker?.close();
  for (const helper of stray.splice(0)) helper.kill();
  await rm(base, { recursive: true, force: true });
});

function pooledBroker(precheck = true): FsBroker {
  broker = createBroker({ pool: { size: 2, perKey: 1, idleMs: 60_000 }, precheck });
  return broker;
}

/** One call through the pool, then wait until its replacement spare blocks reading stdin. */
async function warmUp(sandbox: SandboxContextInput): Promise<void> {
  await broker.call('fs/getMetadata', { path: uri(ws), sandbox });
  await until(() => waitingHelpers(base).length === 1, 'a warm spare');
}

/**
 * A helper started ahead under the broker's launch for `sandbox`, like a spare, but optionally
 * without the mount check (no mount points given to it): the control that shows the hazard is real.
 */
async function controlHelper(
  sandbox: SandboxContextInput,
  options: { mountCheck: boolean },
): Promise<{
  helper: HelperProcess;
  launch: LaunchSpec;
  guard: PathGuard;
}> {
  const { launch, guard } = await broker.prepareSandbox(sandbox);
  const helper = HelperProcess.start(options.mountCheck ? launch : { ...launch, mountPoints: [] });
  stray.push(helper);
  await until(() => waitingHelpersUnder(helper.pid as number).length === 1, 'the control helper to wait');
  return { helper, launch, guard };
}

/** The control helper's run, with the freshness list a warm pool would send. */
function runWithFreshness(
  helper: HelperProcess,
  launch: LaunchSpec,
  request: HelperRequest,
): Promise<HelperReply> {
  const freshness = probeFreshness(launch.boundRoots) ?? [];
  return helper.run({ ...request, freshness }, {});
}

/** A write exactly as the broker would send it, guard included. */
function writeRequest(path: string, text: string, guard: PathGuard): HelperRequest {
  return {
    operation: 'fs/writeFile',
    params: { path, dataBase64: new Uint8Array(Buffer.from(text)), mode: 'overwrite' },
    sandboxed: true,
    guard,
  };
}

describe('a warm helper whose writable root was replaced', () => {
  it('removed and recreated: the write lands in the new directory, never in the deleted one', async () => {
    pooledBroker();
    const sandbox = sandboxContext({ write: [ws] });
    await warmUp(sandbox);
    // Hold the old directory to look into it after it is deleted.
    const oldDirectory = openSync(ws, 'r');
    try {
      rmSync(ws, { recursive: true });
      mkdirSync(ws);
      await broker.call('fs/writeFile', {
        path: uri(join(ws, 'after.txt')),
        dataBase64: base64('new'),
        sandbox,
      });
      expect(readFileSync(join(ws, 'after.txt'), 'utf8')).toBe('new');
      expect(readdirSync(`/proc/self/fd/${oldDirectory}`)).toEqual([]);
      expect(broker.poolStats()).toMatchObject({ staleRetries: 1, hits: 0 });
    } finally {
      closeSync(oldDirectory);
    }
  });

  it('moved away and recreated: the write lands in the new directory, not the moved one', async () => {
    pooledBroker();
    const sandbox = sandboxContext({ write: [ws] });
    await warmUp(sandbox);
    const moved = join(base, 'ws.old');
    // The control: the same launch, the mount check intact, but no freshness list.
    const control = await controlHelper(sandbox, { mountCheck: true });
    renameSync(ws, moved);
    mkdirSync(ws);
    await broker.call('fs/writeFile', {
      path: uri(join(ws, 'after.txt')),
      dataBase64: base64('new'),
      sandbox,
    });
    expect(readFileSync(join(ws, 'after.txt'), 'utf8')).toBe('new');
    expect(readdirSync(moved)).toEqual([]);
    expect(broker.poolStats()).toMatchObject({ staleRetries: 1, hits: 0 });
    // Without the device/inode comparison the old view silently takes the write.
    const reply = await control.helper.run(
      writeRequest(join(ws, 'stale.txt'), 'misdirected', control.guard),
      {},
    );
    expect(reply.status).toBe('ok');
    expect(readFileSync(join(moved, 'stale.txt'), 'utf8')).toBe('misdirected');
  });

  it('bound over a readable / and moved away: the detached mount is noticed (device/inode alone match)', async () => {
    pooledBroker();
    const sandbox = sandboxContext({ write: [ws], readRoot: true });
    await warmUp(sandbox);
    const control = await controlHelper(sandbox, { mountCheck: false });
    renameSync(ws, join(base, 'ws.old'));
    mkdirSync(ws);
    await broker.call('fs/writeFile', {
      path: uri(join(ws, 'after.txt')),
      dataBase64: base64('new'),
      sandbox,
    });
    expect(readFileSync(join(ws, 'after.txt'), 'utf8')).toBe('new');
    expect(broker.poolStats()).toMatchObject({ staleRetries: 1, hits: 0 });
    // The new directory shows through the read-only `/`: same device and inode as the host sees,
    // so only the mount check tells the view is wrong (here: an allowed write fails).
    const reply = await runWithFreshness(
      control.helper,
      control.launch,
      writeRequest(join(ws, 'stale.txt'), 'x', control.guard),
    );
    expect(reply.status).toBe('error');
    expect(reply.status === 'error' && reply.payload.data.errorKind).toBe('permission_denied');
  });
});

describe('a warm helper whose mask was replaced on the host', () => {
  it('a denied directory removed and recreated stays denied (the stale helper refuses, the retry masks it)', async () => {
    const secretDir = join(ws, 'secret');
    mkdirSync(secretDir);
    writeFileSync(join(secretDir, 'key.txt'), 'old secret');
    // No pre-check: the kernel sandbox alone must refuse.
    pooledBroker(false);
    const sandbox = sandboxContext({ write: [ws], deny: [secretDir] });
    await warmUp(sandbox);
    const control = await controlHelper(sandbox, { mountCheck: false });
    rmSync(secretDir, { recursive: true });
    mkdirSync(secretDir);
    writeFileSync(join(secretDir, 'key.txt'), 'new secret');
    const error = await broker.call('fs/readFile', { path: uri(join(secretDir, 'key.txt')), sandbox }).then(
      () => null,
      (caught: unknown) => caught as { kind: string },
    );
    expect(error?.kind).toMatch(/^(permission_denied|not_found)$/);
    // No warm helper answered. When the new directory got the old one's inode number the launch is
    // reused, the spare finds its mask detached and the request is retried (one stale retry); on a
    // busy machine the number has usually gone to another file, the broker's host reads see a new
    // directory and rebuild the launch, and the spare is never taken (none).
    const stats = broker.poolStats();
    expect(stats?.hits).toBe(0);
    expect(stats?.staleRetries).toBeLessThanOrEqual(1);
    // The hazard: in the old helper the mask is gone and the new secret is readable.
    const reply = await runWithFreshness(control.helper, control.launch, {
      operation: 'fs/readFile',
      params: { path: join(secretDir, 'key.txt') },
    });
    expect(reply.status === 'ok' && reply.binary?.data.toString()).toBe('new secret');
  });

  it('a read-only .git removed and recreated stays read-only', async () => {
    mkdirSync(join(ws, '.git'));
    writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    pooledBroker(false);
    const sandbox = sandboxContext({ write: [ws] });
    await warmUp(sandbox);
    const control = await controlHelper(sandbox, { mountCheck: false });
    rmSync(join(ws, '.git'), { recursive: true });
    mkdirSync(join(ws, '.git'));
    writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const error = await broker
      .call('fs/writeFile', { path: uri(join(ws, '.git', 'HEAD')), dataBase64: base64('evil'), sandbox })
      .then(
        () => null,
        (caught: unknown) => caught as { kind: string },
      );
    // The retry's fresh helper refuses at use time, by the physical location of the name.
    expect(error?.kind).toBe('protected_path');
    expect(readFileSync(join(ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    // As above: a stale retry when the inode number came back, a rebuilt launch when it did not.
    expect(broker.poolStats()?.hits).toBe(0);
    expect(broker.poolStats()?.staleRetries).toBeLessThanOrEqual(1);
    // The hazard the mount check closes, shown with a guard that lacks its `.git` rule (the guard
    // alone would refuse too): the stale view writes into the recreated, unprotected .git.
    const rootsOnly = {
      ...control.guard,
      entries: control.guard.entries.filter((entry) => entry.reason === 'writable_root'),
      surface: { entries: [], home: null },
    };
    const reply = await runWithFreshness(
      control.helper,
      control.launch,
      writeRequest(join(ws, '.git', 'HEAD'), 'evil', rootsOnly),
    );
    expect(reply.status).toBe('ok');
    expect(readFileSync(join(ws, '.git', 'HEAD'), 'utf8')).toBe('evil');
  });
});

describe('warm pool under load (real bwrap)', () => {
  it('answers more concurrent requests than it has warm helpers, each with its own file', async () => {
    pooledBroker();
    const sandbox = sandboxContext({ write: [ws] });
    for (let i = 0; i < 8; i++) writeFileSync(join(ws, `f${i}.txt`), `content ${i}`);
    await warmUp(sandbox);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        broker.call('fs/readFile', { path: uri(join(ws, `f${i}.txt`)), sandbox }),
      ),
    );
    expect(
      results.map((result) => Buffer.from((result as { dataBase64: Uint8Array }).dataBase64).toString()),
    ).toEqual(Array.from({ length: 8 }, (_, i) => `content ${i}`));
    // The warm-up's cold call and the 8 went through the pool, warm or cold as the spare and its
    // refills happened to be ready, which on a loaded machine varies; a read started on the last
    // launch and run again after its check goes through the pool twice.
    const stats = broker.poolStats();
    expect((stats?.hits ?? 0) + (stats?.misses ?? 0)).toBeGreaterThanOrEqual(9);
  });
});
