import { lstatSync } from 'node:fs';
import { encodeReply } from './framing.js';
import { checkMountPoints } from './freshness.js';
import { runRequest } from './run-request.js';

/**
 * A warm spare waits for its request with its code already compiled (`node --no-lazy`), but code
 * that has never run is still slow on its first run: the interpreter has no type feedback yet and
 * node's own fs paths are cold. So before blocking on stdin, a spare runs the request path once on
 * two harmless read-only requests of its own (the metadata of `/`, with a freshness check, and a
 * read of a procfs file, which is refused). That takes about 1.3 ms off a warm call (bench/run.mjs).
 * Nothing is written, nothing reaches stdout, and it happens inside the same sandbox as the
 * real request; failures are ignored, since the real request repeats every check.
 */
export async function rehearse(expectedMounts: readonly string[]): Promise<void> {
  try {
    checkMountPoints(expectedMounts);
    const root = lstatSync('/', { bigint: true });
    const freshness = [{ path: '/', dev: root.dev.toString(), ino: root.ino.toString() }];
    encodeReply(await runRequest({ operation: 'fs/getMetadata', params: { path: 'file:///' }, freshness }));
    encodeReply(await runRequest({ operation: 'fs/readFile', params: { path: 'file:///proc/self/stat' } }));
  } catch {
    // A rehearsal only warms code; the real request is checked from scratch.
  }
}
