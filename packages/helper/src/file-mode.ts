import type { BigIntStats } from 'node:fs';
import { readFileSync } from 'node:fs';

/** What open(2) with 0666 gives a new file, as editors and the Codex reference do. */
const NEW_FILE_BITS = 0o666;
// setuid/setgid are not carried over to new content: the kernel clears them on any write to the
// old file too, and keeping them would bless bytes nobody reviewed with elevated rights.
const KEPT_MODE_BITS = 0o1777;
/**
 * The mode a new file gets: 0666 under the process umask. The helper's umask is the broker's
 * (bwrap passes it through), which is the umask of whoever started the broker.
 */
function newFileMode(): number {
  return NEW_FILE_BITS & ~currentUmask();
}

const UMASK_LINE = /^Umask:\s*([0-7]+)$/m;

/**
 * Linux reports the umask in /proc/self/status (since 4.7) without changing it. process.umask()
 * with no argument sets the mask to 0 and back, and a file the thread pool creates meanwhile
 * would get 0666/0777; it is the fallback where /proc does not say.
 */
function currentUmask(): number {
  if (process.platform === 'linux') {
    try {
      const found = UMASK_LINE.exec(readFileSync('/proc/self/status', 'latin1'));
      if (found?.[1] !== undefined) return Number.parseInt(found[1], 8);
    } catch {
      // No /proc in this mount namespace: fall through.
    }
  }
  return process.umask();
}

/** The mode a write gives its result: the replaced file's (without setuid/setgid), or a new file's. */
export function modeForReplacement(existing: BigIntStats | null): number {
  return existing === null ? newFileMode() : Number(existing.mode) & KEPT_MODE_BITS;
}
