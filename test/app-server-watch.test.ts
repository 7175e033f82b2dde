import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './fixtures/conformance/serve-process.js';
import { type AppMessage, AppServerClient } from './support/app-server-client.js';

/**
 * fs/watch of a path whose directories do not exist yet, on `fs-sandbox app-server`: the watch
 * waits on the nearest existing ancestor and enters each directory as it appears. A `mkdir -p`
 * makes the whole chain faster than a watch can be moved down one level, so the directories below
 * the one that sent the event are already there when it is entered; the file written once right
 * after must still be reported, once. Each case runs at once after the watch answers and after a
 * pause (the two timings that once differed), and at a greater depth.
 */

let dir: string;
let peer: AppServerClient;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-app-server-watch-'));
  peer = AppServerClient.ours(['--cwd', dir], { cwd: dir });
  await peer.initialize();
});

afterAll(async () => {
  await peer?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** How long after the first report a second one would have come (the 200 ms coalescing, with room). */
const QUIET_MS = 1_000;

describe('fs/watch of missing directories made by mkdir -p, the file written once', () => {
  it.each([
    { pauseMs: 0, missing: ['later', 'deeper'] },
    { pauseMs: 300, missing: ['later', 'deeper'] },
    { pauseMs: 0, missing: ['a', 'b', 'c', 'd', 'e'] },
    { pauseMs: 300, missing: ['a', 'b', 'c', 'd', 'e'] },
  ])(
    'reports the file exactly once: $missing.length levels, made $pauseMs ms after the watch answered',
    async ({ pauseMs, missing }) => {
      const base = join(dir, `case-${pauseMs}-${missing.length}`);
      await mkdir(base);
      const target = join(base, ...missing, 'file.txt');
      const watchId = `w-${pauseMs}-${missing.length}`;
      expect((await peer.request('fs/watch', { watchId, path: target })).result).toEqual({ path: target });
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      execFileSync('mkdir', ['-p', join(base, ...missing)]);
      await writeFile(target, 'once');
      const mine = (m: AppMessage) => m.method === 'fs/changed' && m.params?.watchId === watchId;
      const first = (await peer.notificationsUntil(mine, 10_000)).filter(mine);
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      const reports = [...first, ...peer.notifications.filter(mine)];
      expect(reports.map((m) => m.params)).toEqual([{ watchId, changedPaths: [target] }]);
      expect((await peer.request('fs/unwatch', { watchId })).result).toEqual({});
    },
  );
});
