import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import type { LaunchSpec } from '../backends/backend.js';
import {
  cancelled,
  type HelperChild,
  HelperProcess,
  type RunHelperOptions,
} from '../runner/helper-process.js';
import type { HelperLauncher } from '../runner/spawn-helper.js';
import { spawnLaunch } from '../runner/spawn-launch.js';
import { killOnExit, type ProcessOwner } from './exit-cleanup.js';
import { probeFreshness } from './freshness-probe.js';
import { launchKey } from './launch-key.js';
import type { PoolOptions } from './pool-options.js';
import { emptyCounters, type PoolStats } from './pool-stats.js';
import { spareLaunch } from './spare-launch.js';
import { SPAWNER_ANSWER_MS, Spawner } from './spawner.js';

interface Spare {
  helper: HelperProcess;
  expiry: NodeJS.Timeout;
  /** performance.now() when it was spawned. */
  bornAt: number;
}

/** The spares of one launch, and when a request last used that launch (for eviction). */
interface Shape {
  spares: Spare[];
  lastUsed: number;
}

/**
 * The warm helper pool. Helpers are spawned ahead under the exact launch a request
 * needs and block reading stdin; a request takes one (still one request per process) and a
 * replacement is spawned once the reply is back, so the spawn's fork never delays that reply. A
 * request that takes the last spare of its shape, or one that has not had a start's time yet,
 * shows demand outpacing supply: that shape is then kept one spare deeper, up to the pool's size, so back-to-back requests find a
 * helper that has finished starting; idle expiry lowers it again.
 *
 * A warm helper's bind mounts were made when it started. Before acting it must prove its view is
 * still the host's: the request carries the device/inode of every bound root as the broker sees
 * them now, and the helper also checks that every mount it was started with is still mounted. A
 * stale helper refuses (`data.stale`); the request is then retried once with a new helper, and the
 * other spares of that shape, spawned about as long ago, are dropped.
 *
 * Every helper this pool starts (warm or cold) is tracked, and killed on close() and when the
 * broker's process exits.
 */
export class WarmPool implements ProcessOwner {
  private readonly shapes = new Map<string, Shape>();
  /**
   * Extra spares wanted per shape beyond `perKey`, raised each time a request finds its shape run
   * dry (requests arrive faster than spares start) and lowered each time a spare idles out. The
   * pool's `size` still bounds the total; at most `size` shapes are remembered.
   */
  private readonly surge = new Map<string, number>();
  /**
   * Requests per shape running cold right now because no spare was left. A reply that comes while
   * any still runs schedules no refill: the requests of a burst are all on their way already, so a
   * spare started then (with its warm-up work) would only compete for the CPUs their own helpers
   * need, measurably slowing the burst below the pool-off figure. The last of them to finish
   * refills. A cold run that starts after a reply (the caller's next awaited call) is no burst and
   * does not hold back the refill that reply scheduled.
   */
  private readonly coldRuns = new Map<string, number>();
  /** Shapes whose last taken spare had not had a start's time yet: refilled without warm-up. */
  private readonly hurried = new Set<string>();
  private readonly live = new Set<HelperProcess>();
  private readonly counters = emptyCounters();
  private warmCount = 0;
  /** How long the latest cold run took from spawn to reply: what a spare needs to be ready. */
  private startMs = 0;
  private closed = false;
  /** Starts the spares off this process's event loop (see spawner.ts); made by the first refill. */
  private spawner: Spawner | null = null;
  private readonly forgetExitHook: () => void;

  constructor(private readonly options: PoolOptions) {
    this.forgetExitHook = killOnExit(this);
  }

  /** The pool as the runner's launcher seam. */
  readonly launch: HelperLauncher = async (launch, request, options) => {
    if (options.signal?.aborted) throw cancelled();
    const key = launchKey(launch);
    const spare = this.take(key);
    // A spare younger than a start takes: its request waits for the rest of that start.
    const young = spare !== null && performance.now() - spare.bornAt < this.startMs;
    // Demand outpaces supply: the last spare taken, or a young one.
    if (spare !== null && (!this.shapes.has(key) || young)) this.raiseSurge(key);
    // The next spares of a shape whose requests come faster than spares finish starting skip the
    // warm-up (see spareLaunch): a request that takes one mid-start would wait for a rehearsal
    // whose gain (a few ms) is less than it costs, and on a busy machine the spares' own CPU is
    // what the next requests wait for. A spare found ready makes them warm up again.
    if (young) this.markHurried(key);
    else if (spare !== null) this.hurried.delete(key);
    const reply =
      spare === null
        ? await this.runColdCounted(key, launch, request, options)
        : await this.runWarm(spare.helper, key, launch, request, options);
    // Only after a real reply: a launch that cannot even start would make every spare die too.
    // Whether to refill is decided now, the spawn itself runs after the reply is delivered: a
    // caller awaiting its calls back to back sends the next one before a setImmediate runs, and
    // that call, cold for want of a spare, would otherwise block every refill after it.
    if (!this.coldRuns.has(key)) setImmediate(() => this.refill(key, launch));
    return reply;
  };

  stats(): PoolStats {
    return {
      options: { ...this.options },
      ...this.counters,
      live: this.live.size,
      warm: this.warmCount,
      keys: this.shapes.size,
    };
  }

  /** Kills every helper (waiting or running), spawns no more, and resolves once they are gone. */
  async close(): Promise<void> {
    this.closed = true;
    this.killAll();
    this.forgetExitHook();
    // The exits of the helpers the spawner started come through it: one that does not relay them
    // within its bound (stopped) is killed, which ends them all (Spawner.terminate).
    const spawner = this.spawner;
    const bound = setTimeout(() => spawner?.terminate(), SPAWNER_ANSWER_MS);
    try {
      await Promise.all(
        [...this.live].map((helper) => new Promise<void>((resolve) => helper.onExit(resolve))),
      );
    } finally {
      clearTimeout(bound);
    }
    // Only now, for the same reason.
    spawner?.close();
  }

  killAll(): void {
    for (const key of [...this.shapes.keys()]) this.dropSpares(key);
    for (const helper of this.live) helper.kill();
  }

  private async runWarm(
    helper: HelperProcess,
    key: string,
    launch: LaunchSpec,
    request: HelperRequest,
    options: RunHelperOptions,
  ): Promise<HelperReply> {
    const freshness = probeFreshness(launch.boundRoots);
    if (freshness === null) {
      // A bound root the broker cannot even look at: its identity cannot be compared.
      helper.kill();
      return this.runCold(launch, request, options, true);
    }
    const reply = await helper.run(
      { ...request, freshness: [...(request.freshness ?? []), ...freshness] },
      options,
      'reply',
    );
    if (!isStale(reply)) {
      this.counters.hits += 1;
      return reply;
    }
    this.counters.staleRetries += 1;
    this.dropSpares(key);
    // Retried once, cold: its mounts are made now. Should even that one be stale (the host keeps
    // changing the tree), its refusal is the answer.
    return this.runCold(launch, request, options, false);
  }

  private async runColdCounted(
    key: string,
    launch: LaunchSpec,
    request: HelperRequest,
    options: RunHelperOptions,
  ): Promise<HelperReply> {
    this.coldRuns.set(key, (this.coldRuns.get(key) ?? 0) + 1);
    try {
      return await this.runCold(launch, request, options, true);
    } finally {
      const left = (this.coldRuns.get(key) ?? 1) - 1;
      if (left > 0) this.coldRuns.set(key, left);
      else this.coldRuns.delete(key);
    }
  }

  private async runCold(
    launch: LaunchSpec,
    request: HelperRequest,
    options: RunHelperOptions,
    countMiss: boolean,
  ): Promise<HelperReply> {
    if (countMiss) this.counters.misses += 1;
    const started = performance.now();
    const reply = await this.spawn(launch).run(request, options);
    this.startMs = performance.now() - started;
    return reply;
  }

  private spawn(launch: LaunchSpec, start: (launch: LaunchSpec) => HelperChild = spawnLaunch): HelperProcess {
    const helper = HelperProcess.start(launch, start);
    this.counters.spawned += 1;
    this.live.add(helper);
    helper.onExit(() => this.live.delete(helper));
    return helper;
  }

  /**
   * The oldest live spare of this shape (the likeliest to have finished starting), if any. While the
   * spawner is stalled, a spare it has not answered for (no pid) may never start: it is dropped
   * (killed once the spawner answers, or with the spawner) rather than waited on, so the request
   * runs cold and the refill after it is this process's own spawn.
   */
  private take(key: string): Spare | null {
    const stalled = this.spawner?.stalled === true;
    for (;;) {
      const spare = this.shapes.get(key)?.spares[0];
      if (spare === undefined) return null;
      this.removeSpare(key, spare);
      if (stalled && spare.helper.pid === undefined) spare.helper.kill();
      else if (spare.helper.alive) return spare;
    }
  }

  /** Tops this shape up to `perKey` spares, making room in a full pool from the least recently used shape. */
  private refill(key: string, launch: LaunchSpec): void {
    const shape = this.shapes.get(key) ?? { spares: [], lastUsed: 0 };
    shape.lastUsed = performance.now();
    this.shapes.set(key, shape);
    const target = Math.min(this.options.size, this.options.perKey + (this.surge.get(key) ?? 0));
    while (!this.closed && shape.spares.length < target) {
      if (this.warmCount >= this.options.size && !this.evictOtherThan(key)) break;
      try {
        this.addSpare(shape, key, launch);
      } catch {
        // The spawn itself was refused (a descriptor the broker cannot keep from it, a spawn
        // error): no spare now; the next request of this shape runs cold and gets the error.
        break;
      }
    }
    if (shape.spares.length === 0) this.shapes.delete(key);
  }

  private addSpare(shape: Shape, key: string, launch: LaunchSpec): void {
    const helper = this.spawn(this.hurried.has(key) ? launch : spareLaunch(launch), this.spareStart());
    helper.setReferenced(false);
    const spare: Spare = {
      helper,
      bornAt: performance.now(),
      expiry: setTimeout(() => {
        if (this.removeSpare(key, spare)) {
          this.counters.expired += 1;
          this.lowerSurge(key);
          helper.kill();
        }
      }, this.options.idleMs).unref(),
    };
    shape.spares.push(spare);
    this.warmCount += 1;
    helper.onExit(() => {
      // Still listed: it exited while waiting (crashed, or killed from outside).
      if (this.removeSpare(key, spare)) this.counters.died += 1;
    });
  }

  /** How a spare is started: by the spawner where there can be one, else in this process. */
  private spareStart(): (launch: LaunchSpec) => HelperChild {
    if (!Spawner.supported) return spawnLaunch;
    this.spawner ??= new Spawner();
    const spawner = this.spawner;
    return (launch) => spawner.spawn(launch);
  }

  private raiseSurge(key: string): void {
    const extra = Math.min(this.options.size - this.options.perKey, (this.surge.get(key) ?? 0) + 1);
    this.surge.delete(key);
    if (extra <= 0) return;
    this.surge.set(key, extra);
    // Bounded memory: the shapes that surged longest ago are forgotten first (insertion order).
    if (this.surge.size > this.options.size) this.surge.delete(this.surge.keys().next().value as string);
  }

  private markHurried(key: string): void {
    this.hurried.delete(key);
    this.hurried.add(key);
    // Bounded as the surge is: the shapes hurried longest ago are forgotten first.
    if (this.hurried.size > this.options.size)
      this.hurried.delete(this.hurried.values().next().value as string);
  }

  private lowerSurge(key: string): void {
    const extra = (this.surge.get(key) ?? 0) - 1;
    if (extra > 0) this.surge.set(key, extra);
    else this.surge.delete(key);
  }

  private removeSpare(key: string, spare: Spare): boolean {
    const shape = this.shapes.get(key);
    const index = shape?.spares.indexOf(spare) ?? -1;
    if (shape === undefined || index === -1) return false;
    shape.spares.splice(index, 1);
    if (shape.spares.length === 0) this.shapes.delete(key);
    clearTimeout(spare.expiry);
    this.warmCount -= 1;
    return true;
  }

  private dropSpares(key: string): void {
    this.surge.delete(key);
    this.hurried.delete(key);
    for (const spare of [...(this.shapes.get(key)?.spares ?? [])]) {
      this.removeSpare(key, spare);
      spare.helper.kill();
    }
  }

  /** Kills the oldest spare of the least recently used other shape; false when there is none. */
  private evictOtherThan(key: string): boolean {
    let victim: [string, Shape] | null = null;
    for (const entry of this.shapes) {
      if (
        entry[0] !== key &&
        entry[1].spares.length > 0 &&
        (victim === null || entry[1].lastUsed < victim[1].lastUsed)
      ) {
        victim = entry;
      }
    }
    const spare = victim?.[1].spares[0];
    if (victim === null || spare === undefined) return false;
    this.removeSpare(victim[0], spare);
    spare.helper.kill();
    this.counters.evicted += 1;
    return true;
  }
}

/** The helper's refusal to act on a view that no longer matches the host (see the helper's freshness.ts). */
function isStale(reply: HelperReply): boolean {
  return reply.status === 'error' && reply.payload.data.stale === true;
}
