import { FsError, fsPathArg } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { lstat } from './fs-async.js';
import { isPlainObject } from './params.js';
import type { FreshnessEntry } from './protocol.js';

const DECIMAL = /^\d{1,20}$/;

/** Validates the request's `freshness` list (absent means: no check asked). */
export function parseFreshness(value: unknown): FreshnessEntry[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new FsError('invalid_request', 'helper request `freshness` must be an array');
  return value.map((item) => {
    if (
      !isPlainObject(item) ||
      typeof item.path !== 'string' ||
      typeof item.dev !== 'string' ||
      typeof item.ino !== 'string' ||
      !DECIMAL.test(item.dev) ||
      !DECIMAL.test(item.ino)
    ) {
      throw new FsError(
        'invalid_request',
        'helper request `freshness` entries must be {path, dev, ino} with decimal dev/ino',
      );
    }
    return { path: item.path, dev: item.dev, ino: item.ino };
  });
}

function stale(path: string): FsError {
  return new FsError(
    'helper_failed',
    `sandbox view is stale: ${displayPath(path)} changed since the helper started`,
    {
      stale: true,
    },
  );
}

/**
 * A warm helper's sandbox was built earlier: its bind mounts pin the inodes the roots had then.
 * Before acting, every root the broker sees now must be the same file here (same device and inode,
 * without following a symlink); otherwise the helper refuses and the broker retries with a fresh
 * one. Nothing is touched before this check passes.
 */
export async function checkFreshness(entries: FreshnessEntry[]): Promise<void> {
  for (const entry of entries) {
    const stats = await lstat(fsPathArg(entry.path), { bigint: true }).catch(() => null);
    if (stats === null || stats.dev.toString() !== entry.dev || stats.ino.toString() !== entry.ino) {
      throw stale(entry.path);
    }
  }
}
