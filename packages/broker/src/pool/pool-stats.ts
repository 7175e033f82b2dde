import type { PoolOptions } from './pool-options.js';

/** What `fs-sandbox doctor` and the serve statistics show of the warm pool. */
export interface PoolStats {
  options: PoolOptions;
  /** Requests served by a helper spawned ahead. */
  hits: number;
  /** Requests that found no usable warm helper and spawned one (cold). */
  misses: number;
  /** Helpers this pool spawned, warm and cold. */
  spawned: number;
  /** Warm helpers killed because nobody used them within idleMs. */
  expired: number;
  /** Warm helpers killed to make room for another sandbox shape (the pool's total is full). */
  evicted: number;
  /** Warm helpers that exited on their own while waiting (they are not replaced until the next request). */
  died: number;
  /** Warm helpers that found their view stale; each request was retried once with a new helper. */
  staleRetries: number;
  /** Helper processes of this pool alive now (waiting or running). */
  live: number;
  /** Of those, waiting for a request. */
  warm: number;
  /** Sandbox shapes with at least one warm helper. */
  keys: number;
}

export type PoolCounters = Pick<
  PoolStats,
  'hits' | 'misses' | 'spawned' | 'expired' | 'evicted' | 'died' | 'staleRetries'
>;

export function emptyCounters(): PoolCounters {
  return { hits: 0, misses: 0, spawned: 0, expired: 0, evicted: 0, died: 0, staleRetries: 0 };
}
