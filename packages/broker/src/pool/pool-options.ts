import { FsError } from '@fs-sandbox/policy/core';

/** How many helpers the warm pool keeps spawned ahead, and for how long. */
export interface PoolOptions {
  /** Warm helpers kept in total, over every sandbox shape (0 turns the pool off). */
  size: number;
  /** Warm helpers kept for one sandbox shape (one exact launch). */
  perKey: number;
  /** A warm helper not used within this many milliseconds is killed and not replaced. */
  idleMs: number;
}

/**
 * Each warm helper is a node process (about 40 MB resident) plus its bwrap: four of them bound the
 * pool's memory to roughly 160-200 MB. Two per shape let back-to-back calls of one agent find a
 * spare while the replacement of the previous one is still starting.
 */
export const POOL_DEFAULTS: Readonly<PoolOptions> = { size: 4, perKey: 2, idleMs: 30_000 };

/** Hard ceilings, so a configuration typo cannot fork hundreds of processes or keep them for days. */
export const POOL_MAXIMUMS: Readonly<PoolOptions> = { size: 64, perKey: 64, idleMs: 3_600_000 };

/** The effective options, or null when the pool is off (`false`, or a size of 0). */
export function resolvePoolOptions(input: Partial<PoolOptions> | false | undefined): PoolOptions | null {
  if (input === false) return null;
  const options = { ...POOL_DEFAULTS, ...input };
  for (const name of ['size', 'perKey', 'idleMs'] as const) {
    const value = options[name];
    if (!Number.isSafeInteger(value) || value < 0 || value > POOL_MAXIMUMS[name]) {
      throw new FsError(
        'invalid_params',
        `pool ${name} must be an integer from 0 to ${POOL_MAXIMUMS[name]}, got ${String(value)}`,
      );
    }
  }
  if (options.size === 0 || options.perKey === 0) return null;
  return { ...options, perKey: Math.min(options.perKey, options.size) };
}
