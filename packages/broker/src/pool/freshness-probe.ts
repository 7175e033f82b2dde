import { lstatSync } from 'node:fs';
import type { FreshnessEntry } from '@fs-sandbox/helper';
import { fsPathArg } from '@fs-sandbox/policy/core';

/**
 * The device and inode of each bound root as the broker sees it now, for a warm helper to compare
 * with its own view (request `freshness`). Not following a final symlink, like the helper. Null when
 * a root cannot be looked at: the view cannot be proven fresh, so the caller starts a new helper.
 */
export function probeFreshness(roots: readonly string[]): FreshnessEntry[] | null {
  const entries: FreshnessEntry[] = [];
  for (const path of roots) {
    try {
      const stats = lstatSync(fsPathArg(path), { bigint: true });
      entries.push({ path, dev: stats.dev.toString(), ino: stats.ino.toString() });
    } catch {
      return null;
    }
  }
  return entries;
}
