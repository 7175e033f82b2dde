import type { ChildProcess, IOType, StdioOptions } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import type { Stream } from 'node:stream';
import { inheritedDescriptors } from '@fs-sandbox/helper';
import { FsError } from '@fs-sandbox/policy';
import type { LaunchInputs } from '../backends/backend.js';

/**
 * Descriptors libuv needs above the stdio array in the child: it moves each source descriptor
 * (the pipes, /dev/null) past the array's end before placing it.
 */
const SPAWN_HEADROOM = 16;
const OPEN_FILES_LIMIT = /^Max open files\s+(\d+|unlimited)/m;

/** Opened once, by node, so close-on-exec: only the copies a child is given outlive an exec. */
let devNull: number | null = null;

function devNullDescriptor(): number {
  devNull ??= openSync('/dev/null', 'r');
  return devNull;
}

type Slot = IOType | 'ipc' | Stream | number;

/**
 * The stdio of a launch: stdin, stdout and stderr as given (and a command's channel to the broker
 * after them, when it has one), then the launch's inputs from `inputs.firstFd` (backend.ts
 * LaunchInputs: a pipe the filter is written into, /dev/null for each empty input). The numbers are
 * fixed because the argv names them; a descriptor this process passes on at one of them is
 * replaced, which covers it as well as /dev/null would (bwrap reads each and closes it).
 */
function launchStdio(stdio: readonly Slot[], inputs: LaunchInputs | undefined): Slot[] {
  const slots: Slot[] = [...stdio];
  if (inputs === undefined) return slots;
  if (slots.length !== inputs.firstFd)
    throw new FsError(
      'internal_error',
      `launch inputs start at fd ${inputs.firstFd}, after ${slots.length} others`,
    );
  if (inputs.seccomp !== null) slots.push('pipe');
  for (let i = 0; i < inputs.emptyInputs; i += 1) slots.push(devNullDescriptor());
  return slots;
}

/** Gives a started launch its inputs: the filter program into its pipe, then the pipe's end. */
export function feedLaunchInputs(child: ChildProcess, inputs: LaunchInputs | undefined): void {
  if (inputs?.seccomp == null) return;
  const pipe = child.stdio[inputs.firstFd] as NodeJS.WritableStream | null | undefined;
  if (pipe == null) return;
  // A launcher that failed to start (or died at once) closes it: its exit says what happened.
  (pipe as NodeJS.WritableStream & { on(event: 'error', listener: () => void): void }).on('error', () => {});
  pipe.end(Buffer.from(inputs.seccomp, 'base64'));
}

/**
 * A spawn's stdio (`standard`: stdin, stdout, stderr, then the launch's inputs), with every
 * descriptor this process would pass on covered by /dev/null; every helper and every command is
 * spawned so. A descriptor the broker's own parent (a shell's `exec 251<dir`, an embedding program)
 * left open without close-on-exec survives exec, bwrap and every namespace, and the sandbox's mounts
 * do not apply to it: open on a denied file or on a directory outside every root, it would be a way
 * out as /proc/self/fd/N. The node helper closes such descriptors itself, but Bun marks every
 * inherited descriptor close-on-exec as it starts, so the compiled Bun helper could no longer tell
 * them from its own, and a command is the user's program, which closes nothing. So the child is
 * given /dev/null at each of those numbers instead (libuv dup2s it there between fork and exec):
 * nothing of the original reaches bwrap, the helper or the command, and a library user has nothing
 * to close first. Linux only (inheritedDescriptors reads /proc/self/fdinfo). A descriptor another
 * thread opens without close-on-exec between this scan and the fork is not covered (under node the
 * helper's own scan still closes it). One too close to the open-files limit for libuv to place
 * /dev/null there is refused, typed, rather than failing the spawn (or passed on).
 */
export function coveredStdio(standard: readonly Slot[], inputs: LaunchInputs | undefined): StdioOptions {
  const stdio = launchStdio(standard, inputs);
  const passedOn = inheritedDescriptors().filter((fd) => fd >= stdio.length);
  if (passedOn.length === 0) return stdio;
  // The stdio array reaches the highest number; past the open-files limit the spawn itself fails.
  // The refusal names only the descriptors that are too close: those are what to act on.
  const limit = openFilesLimit();
  const tooClose = passedOn.filter((fd) => fd + SPAWN_HEADROOM >= limit).sort((a, b) => a - b);
  if (tooClose.length > 0) {
    const many = tooClose.length > 1;
    throw new FsError(
      'sandbox_unavailable',
      `this process holds descriptor${many ? 's' : ''} ${tooClose.join(', ')} without close-on-exec, too close to its open-files limit (${limit}) to be kept from a sandboxed process; close ${many ? 'them' : 'it'}, open ${many ? 'them' : 'it'} with O_CLOEXEC, or raise the limit (ulimit -n)`,
      { kind: 'sandboxPreparation' },
    );
  }
  for (const fd of passedOn) {
    // 'ignore' above stderr leaves a descriptor as the exec finds it: closed, being close-on-exec.
    while (stdio.length < fd) stdio.push('ignore');
    stdio[fd] = devNullDescriptor();
  }
  return stdio;
}

/** This process's soft limit on open descriptors (node raises it to the hard limit at start). */
function openFilesLimit(): number {
  const limit = OPEN_FILES_LIMIT.exec(readFileSync('/proc/self/limits', 'latin1'))?.[1];
  return limit === undefined || limit === 'unlimited' ? Number.POSITIVE_INFINITY : Number(limit);
}
