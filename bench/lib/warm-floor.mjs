import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { spawnLaunch } from '@fs-sandbox/broker';
import { bunExecutable, compileWithBun } from '../../scripts/bun-compile.mjs';

const PROGRAM = fileURLToPath(new URL('./warm-floor-program.cjs', import.meta.url));

/**
 * The floor of a warm read: the helper's real launch (bwrap, its mounts, its runtime) running a
 * program that does only what a warm helper cannot do without (warm-floor-program.cjs): started
 * ahead, it waits on stdin, reads the one file the request line names and writes a reply. Timed
 * like a warm read, from the request's write to the whole reply, after the same pause; what a warm
 * read costs above it is the broker's and the helper's own work. Under node the program takes the
 * helper bundle's place; the Bun helper is one compiled executable, so the program is compiled the
 * same way (same flags) and takes its place.
 */
export class WarmFloor {
  /** The next process, spawned as soon as the last one answered (as the pool refills). */
  #next;
  #launch;

  constructor(launch, floorDir, warmUpFile) {
    this.#launch = floorLaunch(launch, floorDir, warmUpFile);
    this.#next = this.#spawn();
  }

  /** Milliseconds from writing the request for `path` to the reply's last byte. */
  async time(path) {
    const child = this.#next;
    const started = performance.now();
    const bytes = await new Promise((resolve, reject) => {
      let total = 0;
      let expected = Number.POSITIVE_INFINITY;
      let head = '';
      child.on('error', reject);
      child.on('exit', (code) => {
        if (total < expected) reject(new Error(`the warm floor program exited ${code} before replying`));
      });
      child.stdout.on('data', (chunk) => {
        total += chunk.length;
        if (expected === Number.POSITIVE_INFINITY) {
          head += chunk.toString('latin1');
          const newline = head.indexOf('\n');
          if (newline !== -1) expected = newline + 1 + JSON.parse(head.slice(0, newline)).length;
        }
        if (total >= expected) resolve(total);
      });
      child.stdin.end(`${JSON.stringify({ path })}\n`);
    });
    const ms = performance.now() - started;
    if (bytes < 1024) throw new Error('the warm floor reply lacks the file bytes');
    this.#next = this.#spawn();
    return ms;
  }

  stop() {
    this.#next.kill('SIGKILL');
  }

  #spawn() {
    const child = spawnLaunch(this.#launch, 'ignore');
    child.on('error', () => {});
    child.stdin.on('error', () => {});
    return child;
  }
}

/** The launch with the floor program in the helper's place; the helper's own arguments dropped. */
function floorLaunch(launch, floorDir, warmUpFile) {
  if (launch.helper !== null) {
    const script = join(floorDir, 'warm-floor.cjs');
    copyFileSync(PROGRAM, script);
    return swapped(launch, launch.helper, script, { helper: script }, warmUpFile);
  }
  const bun = bunExecutable();
  if (bun === null) throw new Error('the launch runs a compiled Bun helper, but no Bun package is installed');
  const executable = join(floorDir, 'warm-floor-bun');
  compileWithBun(bun, PROGRAM, executable);
  return swapped(launch, launch.runtime, executable, { runtime: executable }, warmUpFile);
}

function swapped(launch, from, to, fields, warmUpFile) {
  return {
    ...launch,
    ...fields,
    // The program takes the bind (and the command) of what it replaces.
    sandboxArgs: launch.sandboxArgs.map((arg) => (arg === from ? to : arg)),
    helperArgs: [warmUpFile],
    mountPoints: [],
  };
}
