import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { FsError } from '@fs-sandbox/policy/core';
import type { LaunchCommand } from '../backends/launch-command.js';
import { CGROUP_PREFIX } from './process-bound.js';

/**
 * One command's cgroup (process-bound.ts): made before the command starts, with `pids.max`, and
 * removed when it has ended. The launch enters it before bwrap runs: a shell moves itself into the
 * cgroup (`echo $$ > cgroup.procs`, builtins only) and then becomes bwrap (`exec`), so bwrap and
 * everything it starts are counted from the first fork; node cannot run code between its fork and
 * the exec, and moving bwrap after it started would miss what it forked meanwhile.
 */

/** The launcher shell: a fixed path, the cgroup and the command passed as arguments, never as code. */
const SHELL = '/bin/sh';
const ENTER = 'echo $$ > "$1" || exit 125; shift; exec "$@"';

/** How long removal waits for the sandbox's last tasks to be reaped after bwrap's exit. */
const REMOVE_DEADLINE_MS = 5_000;
const REMOVE_POLL_MS = 10;

let sequence = 0;

export class CommandCgroup {
  private removed = false;

  private constructor(readonly path: string) {}

  /** Makes the cgroup with its bound; a typed refusal when it cannot (doctor said it could). */
  static create(parent: string, max: number): CommandCgroup {
    sequence += 1;
    const path = `${parent}/${CGROUP_PREFIX}${process.pid}-${sequence}`;
    try {
      mkdirSync(path);
    } catch (error) {
      throw new FsError(
        'sandbox_unavailable',
        `cannot make the command's cgroup ${path}: ${message(error)}`,
        {
          kind: 'sandboxPreparation',
        },
      );
    }
    const cgroup = new CommandCgroup(path);
    try {
      writeFileSync(`${path}/pids.max`, String(max));
    } catch (error) {
      cgroup.removeNow();
      throw new FsError('sandbox_unavailable', `cannot bound the processes of ${path}: ${message(error)}`, {
        kind: 'sandboxPreparation',
      });
    }
    return cgroup;
  }

  /** The launch as the shell that enters this cgroup and then becomes the launch's program. */
  wrap(command: LaunchCommand): LaunchCommand {
    return {
      file: SHELL,
      args: [
        '-c',
        ENTER,
        'fs-sandbox-enter-cgroup',
        `${this.path}/cgroup.procs`,
        command.file,
        ...command.args,
      ],
    };
  }

  /**
   * Removes the cgroup once its last task is gone. When bwrap's init exits the kernel kills what
   * is left in the sandbox's pid namespace, and their exits take a moment; a task still there at
   * the deadline is killed, then removal is tried once more. Never throws: what cannot be removed
   * is removed by the next broker's clean-up (process-bound.ts).
   */
  async remove(): Promise<void> {
    if (this.removed) return;
    const deadline = Date.now() + REMOVE_DEADLINE_MS;
    for (;;) {
      if (this.removeNow()) return;
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, REMOVE_POLL_MS));
    }
    for (const pid of this.tasks()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    this.removeNow();
  }

  private removeNow(): boolean {
    try {
      rmdirSync(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
    this.removed = true;
    return true;
  }

  private tasks(): number[] {
    try {
      return readFileSync(`${this.path}/cgroup.procs`, 'utf8')
        .split('\n')
        .filter((line) => /^\d+$/.test(line))
        .map(Number);
    } catch {
      return [];
    }
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
