import { lstatSync } from 'node:fs';
import { EXECUTABLE_SURFACE, LIMITS, type PathGuard } from '@fs-sandbox/policy/core';
import { encodeReply, encodeRequest } from './framing.js';
import { checkMountPoints } from './freshness.js';
import type { HelperReply } from './protocol.js';
import { runRequest } from './run-request.js';
import { requestHead } from './stdio.js';

/**
 * Shaped like the guards the broker sends (a writable root, a protected name, a denied path), under
 * a root no system has: the rehearsal runs every rule's code and is refused by none of them.
 */
const REHEARSAL_ROOT = '/.fs-sandbox-rehearsal';
const REHEARSAL_GUARD: PathGuard = {
  entries: [
    { path: REHEARSAL_ROOT, reason: 'writable_root', rule: 'writable root' },
    { path: `${REHEARSAL_ROOT}/.git`, reason: 'protected', rule: 'protected metadata path .git' },
    { path: `${REHEARSAL_ROOT}/secret`, reason: 'denied', rule: 'denied path' },
  ],
  denyGlobs: [],
  deniedIdentities: [],
  surface: { entries: [...EXECUTABLE_SURFACE], home: null },
};

/**
 * A small regular file every Linux and macOS system has and the system part of a sandbox shows.
 * Where a sandbox does not, the rehearsal's read takes the not-found path instead.
 */
const REHEARSAL_FILE = '/etc/passwd';
const NEWLINE = 0x0a;

/**
 * A warm spare waits for its request with its code already compiled (`node --no-lazy`), but code
 * that has never run is still slow on its first run: the interpreter has no type feedback yet and
 * the runtime's own fs paths are cold. So before blocking on stdin, a spare runs the request path
 * once on two harmless read-only requests of its own, shaped as the broker sends them (sandboxed,
 * with a guard and a freshness check, native paths): the metadata of `/`, and a whole read of a
 * small system file, taken in from its wire bytes as stdin's request is and encoded as a reply with
 * its bytes. The read is the one to rehearse in full: while it was a procfs file (refused after the
 * open), a warm 1 KiB read ran its framing, guard, read and reply code for the first time.
 * Nothing is written, nothing reaches stdout, and it happens inside the same sandbox as the real
 * request; the replies are returned (tests check the rehearsal really runs the operations) and
 * otherwise ignored, since the real request repeats every check.
 */
export async function rehearse(expectedMounts: readonly string[]): Promise<HelperReply[]> {
  try {
    checkMountPoints(expectedMounts);
    const root = lstatSync('/', { bigint: true });
    const freshness = [{ path: '/', dev: root.dev.toString(), ino: root.ino.toString() }];
    const shaped = { sandboxed: true, guard: REHEARSAL_GUARD, freshness };
    const read = { operation: 'fs/readFile', params: { path: REHEARSAL_FILE }, ...shaped } as const;
    const wire = Buffer.concat(encodeRequest(read));
    const replies = [
      await runRequest({ operation: 'fs/getMetadata', params: { path: '/' }, ...shaped }),
      await runRequest(requestHead(wire, wire.indexOf(NEWLINE), LIMITS.helperMaxRequestBytes).line),
    ];
    for (const reply of replies) encodeReply(reply);
    return replies;
  } catch {
    // A rehearsal only warms code; the real request is checked from scratch.
    return [];
  }
}
