import { POOL_DEFAULTS, POOL_MAXIMUMS, type PoolOptions } from '@fs-sandbox/broker/internal';
import { type Command, InvalidArgumentError } from 'commander';

export interface PoolFlags {
  poolSize: number;
  poolPerKey: number;
  poolIdleMs: number;
}

function boundedInteger(max: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 0 || value > max) {
      throw new InvalidArgumentError(`expected an integer from 0 to ${max}`);
    }
    return value;
  };
}

/** The warm pool's flags (for long-lived commands only: a one-shot call would waste its spares). */
export function addPoolOptions(command: Command): Command {
  return command
    .option(
      '--pool-size <n>',
      'warm helpers kept spawned ahead in total (0 turns the pool off)',
      boundedInteger(POOL_MAXIMUMS.size),
      POOL_DEFAULTS.size,
    )
    .option(
      '--pool-per-key <n>',
      'warm helpers kept for one sandbox shape',
      boundedInteger(POOL_MAXIMUMS.perKey),
      POOL_DEFAULTS.perKey,
    )
    .option(
      '--pool-idle-ms <ms>',
      'kill a warm helper nobody used for this long (the pool shrinks to zero when idle)',
      boundedInteger(POOL_MAXIMUMS.idleMs),
      POOL_DEFAULTS.idleMs,
    );
}

export function poolOptionsFrom(flags: PoolFlags): PoolOptions {
  return { size: flags.poolSize, perKey: flags.poolPerKey, idleMs: flags.poolIdleMs };
}

/** One line for people: the configuration and what the pool has done so far. */
export function describePool(stats: {
  options: PoolOptions;
  hits: number;
  misses: number;
  spawned: number;
  expired: number;
  staleRetries: number;
  live: number;
}): string {
  const { size, perKey, idleMs } = stats.options;
  return (
    `size ${size}, ${perKey} per sandbox shape, idle ${idleMs} ms; ` +
    `hits ${stats.hits}, misses ${stats.misses}, spawned ${stats.spawned}, expired ${stats.expired}, ` +
    `stale retries ${stats.staleRetries}, live helpers ${stats.live}`
  );
}
