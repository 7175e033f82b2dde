import { readFileSync } from 'node:fs';

/** The one-letter state of a process from /proc (R, S, T, Z, …), or null when it is gone. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the state follows its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** Running (a zombie waiting for a reaper that is not us counts as dead: it runs nothing). */
export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== null && state !== 'Z';
}

/** Stopped by a signal (SIGSTOP). */
export function isStopped(pid: number): boolean {
  return processState(pid) === 'T';
}

/** Polls `condition` every 10 ms until it holds, failing with `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
