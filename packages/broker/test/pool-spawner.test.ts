import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelperReply } from '@fs-sandbox/helper';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Spawner } from '../src/pool/spawner.js';
import { SPAWNER_NAME } from '../src/pool/spawner-program.js';
import { HelperProcess } from '../src/runner/helper-process.js';
import { directLaunch } from './support/launches.js';
import { isAlive, isStopped, until } from './support/processes.js';

/**
 * The pool's spawner process (pool/spawner.ts) against a fake helper that answers with what it
 * sees of itself: its parent and every descriptor it holds. Linux only, like the spawner.
 */

const FAKE_HELPER = `
const fs = require('fs');
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8').split('\\n')[0]);
  if (request.params.hang) { setInterval(() => {}, 1000); return; }
  const fds = {};
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try { fds[fd] = fs.readlinkSync('/proc/self/fd/' + fd); } catch {}
  }
  const ppid = Number(fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[1]);
  process.stdout.write(JSON.stringify({ status: 'ok', payload: { operation: 'fs/getMetadata',
    response: { ppid, fds, echo: request.params.echo ?? null } } }) + '\\n');
});`;

let dir: string;
let launch: ReturnType<typeof directLaunch>;
const spawners: Spawner[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-spawner-'));
  const script = join(dir, 'fake-helper.cjs');
  await writeFile(script, FAKE_HELPER);
  // env(1) execs node: the helper is the spawner's child itself.
  launch = directLaunch({ sandboxProgram: '/usr/bin/env', runtime: process.execPath, helper: script });
});

afterEach(() => {
  for (const spawner of spawners.splice(0)) spawner.close();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function listeningSpawner(): Promise<Spawner> {
  const spawner = new Spawner();
  spawners.push(spawner);
  await until(() => spawner.listening, 'the spawner to listen');
  return spawner;
}

/** This process's children whose command line holds `name` (the spawners it started). */
function childrenNamed(name: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return (
          ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(name)
        );
      } catch {
        return false;
      }
    });
}

function responseOf(reply: HelperReply): { ppid: number; fds: Record<string, string>; echo: unknown } {
  if (reply.status !== 'ok') throw new Error(`expected an ok reply, got ${JSON.stringify(reply)}`);
  return reply.payload.response as never;
}

const exited = (helper: HelperProcess) => new Promise<void>((resolve) => helper.onExit(resolve));

describe.runIf(Spawner.supported)('pool spawner', () => {
  it('starts a launch in its own process and hands its pipes over: the request and reply pass', async () => {
    const spawner = await listeningSpawner();
    const helper = HelperProcess.start(launch, (each) => spawner.spawn(each));
    // Larger than a socket's buffer: queued writes must all reach the helper before its stdin ends.
    const echo = 'x'.repeat(4_000_000);
    const { ppid, echo: echoed } = responseOf(
      await helper.run({ operation: 'fs/getMetadata', params: { echo } }, {}),
    );
    expect(echoed).toBe(echo);
    expect(ppid).not.toBe(process.pid);
    expect(readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0')).toContain(SPAWNER_NAME);
  });

  it('gives the helper no descriptor but its pipes: the channel to the spawner is covered', async () => {
    const spawner = await listeningSpawner();
    const helper = HelperProcess.start(launch, (each) => spawner.spawn(each));
    const { ppid, fds } = responseOf(await helper.run({ operation: 'fs/getMetadata', params: {} }, {}));
    const channel = readlinkSync(`/proc/${ppid}/fd/3`);
    expect(channel).toMatch(/^socket:/);
    expect(Object.values(fds)).not.toContain(channel);
    // node's own descriptors above stderr are close-on-exec: what the helper got is its stdio
    // (socket pairs, as node makes its pipes) and /dev/null at the channel's number.
    expect(fds['3']).toBe('/dev/null');
    const sockets = Object.keys(fds).filter((fd) => fds[fd]?.startsWith('socket:'));
    expect(sockets.sort()).toEqual(['0', '1', '2']);
  });

  it('kills a helper whose kill came before the spawner answered', async () => {
    const spawner = await listeningSpawner();
    const helper = HelperProcess.start(launch, (each) => spawner.spawn(each));
    helper.kill();
    await exited(helper);
    expect(helper.pid).toBeDefined();
    await until(() => !isAlive(helper.pid as number), 'the helper to be gone');
  });

  it('a spawner that does not answer (stopped) holds no call past its timeout; its launch is killed later', async () => {
    const spawner = await listeningSpawner();
    const [spawnerPid] = childrenNamed(SPAWNER_NAME).filter((pid) => isAlive(pid) && !isStopped(pid));
    process.kill(spawnerPid as number, 'SIGSTOP');
    try {
      const helper = HelperProcess.start(launch, (each) => spawner.spawn(each));
      const started = Date.now();
      const outcome = await helper
        .run({ operation: 'fs/getMetadata', params: {} }, { timeoutMs: 300 })
        .catch((e) => e);
      expect(outcome).toMatchObject({ kind: 'timeout' });
      // Settled by its timeout, not by the spawner (stopped for the whole wait).
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(helper.pid).toBeUndefined();
      process.kill(spawnerPid as number, 'SIGCONT');
      await until(() => helper.pid !== undefined, 'the resumed spawner to answer');
      await until(() => !isAlive(helper.pid as number), 'the late launch to be killed');
    } finally {
      process.kill(spawnerPid as number, 'SIGCONT');
    }
  });

  it('ends with close(), killing what it started, and later spawns are made in this process', async () => {
    const spawner = await listeningSpawner();
    const helper = HelperProcess.start(launch, (each) => spawner.spawn(each));
    const running = helper.run({ operation: 'fs/getMetadata', params: { hang: true } }, {}).catch((e) => e);
    await until(() => helper.pid !== undefined, 'the helper to start');
    spawner.close();
    await exited(helper);
    await running;
    await until(() => !isAlive(helper.pid as number), 'the helper to die with the spawner');
    expect(spawner.listening).toBe(false);
    const local = spawner.spawn(launch);
    expect(local.pid).toBeDefined();
    local.kill('SIGKILL');
  });
});
