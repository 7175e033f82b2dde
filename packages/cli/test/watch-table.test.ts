import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FsError, type PathGuard, type SandboxContextInput } from '@fs-sandbox/policy';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppServerBroker } from '../src/server/app-server/app-server-settings.js';
import { WatchTable } from '../src/server/app-server/watch-table.js';

/**
 * The watch table with a broker whose policy answers can fail for a while, as a loaded machine's
 * can: the sandbox's physical checks are the e2e suites' (app-server-watch, app-server-red-team);
 * here that a watch waiting for missing directories is not left behind by such a failure.
 */

const OPEN_GUARD: PathGuard = {
  entries: [],
  denyGlobs: [],
  deniedIdentities: [],
  surface: { entries: [], home: null },
};

let root: string | null = null;

afterEach(() => {
  if (root !== null) rmSync(root, { recursive: true, force: true });
  root = null;
});

/** A broker that reads everything but fails to judge `failing` the first `failures` times. */
function flakyBroker(failing: string, failures: number) {
  const calls = { failing: 0 };
  const broker = {
    async explainAccess(params: { path: string }) {
      if (params.path.endsWith(`/${failing}`) && calls.failing++ < failures)
        throw new FsError('sandbox_unavailable', 'the sandbox could not be prepared just now');
      return { access: 'read', reason: 'readable root' };
    },
    async prepareSandbox() {
      return { guard: OPEN_GUARD };
    },
  } as unknown as AppServerBroker;
  return { broker, calls };
}

/** The server's policy: `root` readable (the broker above answers for it anyway). */
function readable(path: string): SandboxContextInput {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [{ path: { type: 'path', path: pathToFileURL(path).href }, access: 'read' }],
      },
      network: 'restricted',
    },
  };
}

describe('WatchTable, a path whose directories do not exist yet', () => {
  it('enters a directory again after its entering failed for a passing reason, and reports the file', async () => {
    root = mkdtempSync(join(tmpdir(), 'fs-sandbox-watch-table-'));
    const { broker, calls } = flakyBroker('later', 3);
    const sent: Array<{ method: string; params: unknown }> = [];
    const table = new WatchTable(
      { broker, context: readable(root), cwd: root, requireSandbox: false, env: {} },
      'linux',
      { notify: (method, params) => sent.push({ method, params }), hasRoom: () => true },
    );
    const target = join(root, 'later', 'deeper', 'file.txt');
    await table.watch({ watchId: 'w', path: target });
    mkdirSync(join(root, 'later', 'deeper'), { recursive: true });
    writeFileSync(target, 'once');
    const deadline = Date.now() + 10_000;
    while (sent.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    table.closeAll();
    expect(calls.failing).toBeGreaterThan(3);
    expect(sent).toEqual([{ method: 'fs/changed', params: { watchId: 'w', changedPaths: [target] } }]);
  });
});
