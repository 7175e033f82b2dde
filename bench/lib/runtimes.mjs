import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { uri, writePatternFile } from './fixture.mjs';
import { ServeClient } from './server-client.mjs';
import { helperProcesses, machineQuiet, spareReady } from './settle.mjs';
import { rotated, summarize } from './stats.mjs';
import { WarmFloor } from './warm-floor.mjs';

export const BURST = 32;
/** Bursts per server (the best of them is reported). */
const BURST_ROUNDS = 5;
const BACK_TO_BACK = 16;
const SPACING_MS = 150;
const LARGE = 64 * 1024 * 1024;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * node and Bun helpers side by side, and the reference Codex exec-server (`peer`, a handshaken
 * ServeClient, or null) in the same rounds, the order rotated every round. Per runtime, a sandboxed
 * 1 KiB fs/readFile cold (pool off), warm with a pause before each call, and back to back (no
 * pause), each through the library and through `fs-sandbox serve`; a burst of 32 concurrent reads
 * through serve with its pool on and off; a 64 MiB read through serve; the peak resident memory of
 * each warm spare; and the warm floor (warm-floor.mjs): the same launch running a program that only
 * waits and reads, timed like the warm read.
 *
 * The peer is measured through its own server on the same fixture and sandbox. It keeps no warm
 * helper: every sandboxed request spawns its bwrap helper chain, which is what our cold read is.
 * So its "cold" is a read on a connection already open (not the first one, which would add the
 * server's own start that none of our figures include), its "warm" the same read in the warm
 * slot, after the same pause.
 */
export async function measureRuntimes(fixture, sandbox, cliBin, runtimes, rounds, peer = null) {
  const read = { path: uri(fixture.oneKiB), sandbox };
  const large = join(fixture.data, 'runtimes-64mib.bin');
  writePatternFile(large, LARGE);
  const per = {};
  for (const runtime of runtimes) {
    const serve = (extra) => new ServeClient(cliBin, ['--helper-runtime', runtime, ...extra]);
    per[runtime] = {
      cold: createBroker({ pool: false, helperRuntime: runtime }),
      warm: createBroker({ pool: { size: 2, perKey: 2, idleMs: 600_000 }, helperRuntime: runtime }),
      serveCold: serve(['--pool-size', '0']),
      serveWarm: serve(['--pool-size', '2', '--pool-per-key', '2', '--pool-idle-ms', '600000']),
      samples: {
        cold: [],
        warm: [],
        backToBack: [],
        serveCold: [],
        serveWarm: [],
        serveBackToBack: [],
        burstPool: [],
        burstNoPool: [],
        large: [],
        spareRss: [],
        warmFloor: [],
      },
    };
  }
  const codex =
    peer === null
      ? null
      : { server: peer, samples: { cold: [], warm: [], backToBack: [], burst: [], large: [] } };
  const timed = async (broker) => {
    const started = performance.now();
    const result = await broker.call('fs/readFile', read);
    if (result.dataBase64.length !== 1024) throw new Error('short read');
    return performance.now() - started;
  };
  const served = async (server, params = read) => {
    const { ms, reply } = await server.time({ id: 'r', method: 'fs/readFile', params });
    if (!reply.head.includes('"dataBase64"')) throw new Error(`read via server failed: ${reply.head}`);
    return { ms, bytes: reply.bytes };
  };
  const servedMs = async (server) => (await served(server)).ms;
  for (const runtime of runtimes) {
    const { launch } = await per[runtime].cold.prepareSandbox(sandbox);
    per[runtime].floor = new WarmFloor(launch, dirname(fixture.emptyScript), fixture.oneKiB);
    await per[runtime].floor.time(fixture.oneKiB);
    await Promise.all([per[runtime].serveCold.handshake(), per[runtime].serveWarm.handshake()]);
    await timed(per[runtime].cold);
    await timed(per[runtime].warm);
    await served(per[runtime].serveCold);
    await served(per[runtime].serveWarm);
  }
  if (codex !== null) await served(codex.server);
  // Every runtime's warm broker and warm server keep two spares of this shape each.
  const settled = async () => {
    await spareReady(fixture.ws, 4 * runtimes.length);
    await machineQuiet();
  };
  const spaced = async () => {
    await spareReady(fixture.ws, 4 * runtimes.length);
    await pause(SPACING_MS);
  };
  const subjects = [...runtimes, ...(codex === null ? [] : ['codex'])];
  for (let round = 0; round < rounds; round++) {
    for (const subject of rotated(subjects, round)) {
      if (subject === 'codex') {
        await settled();
        codex.samples.cold.push(await servedMs(codex.server));
        await spaced();
        codex.samples.warm.push(await servedMs(codex.server));
        continue;
      }
      const { cold, warm, serveCold, serveWarm, floor, samples } = per[subject];
      await settled();
      samples.cold.push(await timed(cold));
      await settled();
      samples.serveCold.push(await servedMs(serveCold));
      await spaced();
      samples.spareRss.push(...sparesOf(fixture.ws, subject).map(peakRss));
      samples.warm.push(await timed(warm));
      await spaced();
      samples.serveWarm.push(await servedMs(serveWarm));
      await spaced();
      samples.warmFloor.push(await floor.time(fixture.oneKiB));
    }
  }
  for (const runtime of runtimes) {
    per[runtime].floor.stop();
    await Promise.all([per[runtime].cold.close(), per[runtime].warm.close()]);
  }
  // Back to back: a run of reads with no pause, per subject in turn (default pool); the pool must keep up.
  const sequences = [];
  for (const runtime of runtimes) {
    per[runtime].backToBack = createBroker({ helperRuntime: runtime });
    await timed(per[runtime].backToBack);
    const { samples, backToBack, serveWarm } = per[runtime];
    sequences.push([samples.backToBack, () => timed(backToBack)]);
    sequences.push([samples.serveBackToBack, () => servedMs(serveWarm)]);
  }
  if (codex !== null) sequences.push([codex.samples.backToBack, () => servedMs(codex.server)]);
  for (let round = 0; round < Math.max(2, Math.floor(rounds / 5)); round++) {
    for (const [samples, once] of rotated(sequences, round)) {
      await pause(500);
      await machineQuiet();
      for (let i = 0; i < BACK_TO_BACK; i++) samples.push(await once());
    }
  }
  await Promise.all(runtimes.map((runtime) => per[runtime].backToBack.close()));
  // Through the servers: bursts (ours with the pool on and off), then 64 MiB reads.
  const bursts = [];
  for (const runtime of runtimes) {
    bursts.push([per[runtime].serveWarm, per[runtime].samples.burstPool]);
    bursts.push([per[runtime].serveCold, per[runtime].samples.burstNoPool]);
  }
  if (codex !== null) bursts.push([codex.server, codex.samples.burst]);
  for (const [server] of bursts) await burst(server, read, 4);
  // Five rounds, the best of each kept: one burst is over in half a second, and the pool's edge
  // (two of 32 requests find a spare) is smaller than one round's noise.
  for (let round = 0; round < BURST_ROUNDS; round++) {
    for (const [server, samples] of rotated(bursts, round)) {
      await pause(1000);
      await machineQuiet();
      samples.push(await burst(server, read, BURST));
    }
  }
  const larges = runtimes.map((runtime) => [per[runtime].serveWarm, per[runtime].samples.large]);
  if (codex !== null) larges.push([codex.server, codex.samples.large]);
  for (let round = 0; round < 3; round++) {
    for (const [server, samples] of rotated(larges, round)) {
      await machineQuiet();
      const { ms, bytes } = await served(server, { path: uri(large), sandbox });
      if (bytes < LARGE) throw new Error('short 64 MiB read');
      samples.push(ms);
    }
  }
  await Promise.all(
    runtimes.flatMap((runtime) => [per[runtime].serveCold.stop(), per[runtime].serveWarm.stop()]),
  );
  const result = Object.fromEntries(
    runtimes.map((runtime) => {
      const { samples } = per[runtime];
      return [
        runtime,
        {
          cold: summarize(samples.cold),
          warm: summarize(samples.warm),
          backToBack: summarize(samples.backToBack),
          serveCold: summarize(samples.serveCold),
          serveWarm: summarize(samples.serveWarm),
          serveBackToBack: summarize(samples.serveBackToBack),
          burstOpsPerSecond: Math.max(...samples.burstPool),
          burstNoPoolOpsPerSecond: Math.max(...samples.burstNoPool),
          largeRead64MiB: summarize(samples.large),
          warmFloor: summarize(samples.warmFloor),
          spareRssMiB: summarize(
            samples.spareRss.filter((bytes) => bytes > 0).map((bytes) => bytes / 2 ** 20),
          ),
        },
      ];
    }),
  );
  if (codex === null) return result;
  const { samples } = codex;
  // Named as our serve rows: the peer is measured through its server only.
  result.codex = {
    serveCold: summarize(samples.cold),
    serveWarm: summarize(samples.warm),
    serveBackToBack: summarize(samples.backToBack),
    burstOpsPerSecond: Math.max(...samples.burst),
    largeRead64MiB: summarize(samples.large),
  };
  return result;
}

/** `count` concurrent reads sent at once; the rate at which their replies came back. */
async function burst(server, params, count) {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    server.child.stdin.write(`${JSON.stringify({ id: `b${i}`, method: 'fs/readFile', params })}\n`);
  }
  for (let i = 0; i < count; i++) {
    const reply = await server.next();
    if (!reply.head.includes('"dataBase64"')) throw new Error(`burst read failed: ${reply.head}`);
  }
  return count / ((performance.now() - started) / 1000);
}

/** The pids of the waiting helpers of one runtime (its program names it: helper.cjs or helper-bun). */
function sparesOf(needle, runtime) {
  const bundle = runtime === 'bun' ? 'helper-bun' : 'helper.cjs';
  return helperProcesses(needle)
    .map((helper) => helper.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
          .split('\0')
          .some((arg) => arg.endsWith(`/${bundle}`));
      } catch {
        return false;
      }
    });
}

function peakRss(pid) {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
