import { lstatSync } from 'node:fs';
import type { PathGuard } from '@fs-sandbox/policy/core';
import { encodeReply } from './framing.js';
import { checkMountPoints } from './freshness.js';
import type { HelperReply } from './protocol.js';
import { runRequest } from './run-request.js';

/** Guards nothing, denies nothing: the rehearsal only reads, and it runs the guard's code all the same. */
const EMPTY_GUARD: PathGuard = { entries: [], denyGlobs: [], deniedIdentities: [] };

/**
 * A warm spare waits for its request with its code already compiled (`node --no-lazy`), but code
 * that has never run is still slow on its first run: the interpreter has no type feedback yet and
 * node's own fs paths are cold. So before blocking on stdin, a spare runs the request path once on
 * two harmless read-only requests of its own, shaped as the broker sends them (sandboxed, with a
 * guard, native paths): the metadata of `/` with a freshness check, and a read of a procfs file (which the
 * regular-file check refuses, after running).
 * Nothing is written, nothing reaches stdout, and it happens inside the same sandbox as the real
 * request; the replies are returned (tests check the rehearsal really runs the operations) and
 * otherwise ignored, since the real request repeats every check.
 */
export async function rehearse(expectedMounts: readonly string[]): Promise<HelperReply[]> {
  try {
    checkMountPoints(expectedMounts);
    const root = lstatSync('/', { bigint: true });
    const freshness = [{ path: '/', dev: root.dev.toString(), ino: root.ino.toString() }];
    const shaped = { sandboxed: true, guard: EMPTY_GUARD };
    const replies = [
      await runRequest({ operation: 'fs/getMetadata', params: { path: '/' }, freshness, ...shaped }),
      await runRequest({ operation: 'fs/readFile', params: { path: '/proc/self/stat' }, ...shaped }),
    ];
    for (const reply of replies) encodeReply(reply);
    return replies;
  } catch {
    // A rehearsal only warms code; the real request is checked from scratch.
    return [];
  }
}
