import { readdirSync, readFileSync } from 'node:fs';

/**
 * Waiting for the machine to settle between samples, so that one variant's background work (a
 * warm pool's replacement spawn, a helper still exiting) is not billed to the next sample.
 */

function cmdlineOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** Helper programs whose command line names `needle`: [{pid, waiting}] (waiting = blocked reading stdin). */
export function helperProcesses(needle) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = cmdlineOf(name);
    // The node process itself, not the bwrap launcher(s) whose argv also names the bundle.
    const program = cmdline.slice(0, cmdline.indexOf('\0'));
    if (program.endsWith('bwrap') || !/\/helper(?:\.cjs|-bun)\0/.test(cmdline) || !cmdline.includes(needle))
      continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      const waiting = readFileSync(`/proc/${name}/syscall`, 'utf8').startsWith('0 0x0 ');
      found.push({ pid: Number(name), waiting });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `count` helpers of `needle` are blocked reading stdin (warm spares ready). */
export async function spareReady(needle, count, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const helpers = helperProcesses(needle);
    if (helpers.length === count && helpers.every((helper) => helper.waiting)) return;
    await sleep(5);
  }
  throw new Error(`the warm spares of ${needle} did not get ready within ${timeoutMs} ms`);
}

function busyJiffies() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  return { busy: fields.reduce((sum, value) => sum + value, 0) - idle };
}

/**
 * Resolves once the whole machine spent (almost) no CPU for `windowMs`, or after `capMs` (a shared
 * machine may never be idle: then the sample is taken anyway and the interleaving spreads the noise).
 */
export async function machineQuiet({ windowMs = 30, capMs = 500 } = {}) {
  const deadline = Date.now() + capMs;
  while (Date.now() < deadline) {
    const before = busyJiffies();
    await sleep(windowMs);
    if (busyJiffies().busy - before.busy <= 1) return true;
  }
  return false;
}
