import type { StdioOptions } from 'node:child_process';
import { openSync } from 'node:fs';
import { inheritedDescriptors } from '@fs-sandbox/helper';

/** Opened once, by node, so close-on-exec: only the copies a child is given outlive an exec. */
let devNull: number | null = null;

/**
 * The stdio of a helper spawn, with every descriptor this process would pass on covered by
 * /dev/null. A descriptor the broker's own parent (or an embedding program) left open without
 * close-on-exec survives exec, bwrap and every namespace, and the sandbox's mounts do not apply to
 * it: open on a denied file or on a directory outside every root, it would be a way out as
 * /proc/self/fd/N. The helper closes such descriptors itself when node runs it, but Bun marks
 * every inherited descriptor close-on-exec as it starts, so the compiled Bun helper could no longer
 * tell them from its own. So the child is given /dev/null at each of those numbers instead (libuv
 * dup2s it there between fork and exec): nothing of the original reaches bwrap or the helper,
 * whichever runs. Linux only (inheritedDescriptors reads /proc/self/fdinfo); a descriptor another
 * thread opens without close-on-exec between this scan and the fork is not covered, and under node
 * the helper's own scan still closes it.
 */
export function helperStdio(): StdioOptions {
  const stdio: Array<'pipe' | 'ignore' | number> = ['pipe', 'pipe', 'pipe'];
  const passedOn = inheritedDescriptors();
  if (passedOn.length === 0) return stdio;
  devNull ??= openSync('/dev/null', 'r');
  for (const fd of passedOn) {
    // 'ignore' above stderr leaves a descriptor as the exec finds it: closed, being close-on-exec.
    while (stdio.length < fd) stdio.push('ignore');
    stdio[fd] = devNull;
  }
  return stdio;
}
