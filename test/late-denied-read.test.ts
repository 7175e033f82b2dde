import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createBroker, type FsBroker, runHelper } from '@fs-sandbox/broker';
import type { HelperRequest } from '@fs-sandbox/helper';
import type { SandboxContextInput } from '@fs-sandbox/policy';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { sandboxContext } from './support/pool.js';

/**
 * A denied name (or deny-glob match) made after the sandbox was set up has no mask over it: bwrap
 * cannot mask a path that does not exist. A read racing its creation can reach the helper under
 * that launch (the pre-check and the launch's own re-check both ran before the file appeared).
 * That race is made exact here: the launch is prepared, the file made, then the helper run under
 * the launch as it was. The helper's check of the opened file's physical location must refuse it,
 * under node and Bun, however the request names it.
 */

const LINUX = process.platform === 'linux';
let base: string;
let root: string;
const brokers: FsBroker[] = [];

beforeAll(() => {
  ensureBuilt();
});

beforeEach(async () => {
  base = await mkdtemp('/tmp/fs-sandbox-late-denied-');
  root = join(base, 'root');
  mkdirSync(join(root, 'keys'), { recursive: true });
  writeFileSync(join(root, 'notes.txt'), 'notes');
});

afterEach(async () => {
  await Promise.all(brokers.splice(0).map((broker) => broker.close()));
  await rm(base, { recursive: true, force: true });
});

function context(): SandboxContextInput {
  const sandbox = sandboxContext({ write: [root], deny: [join(root, 'secret')] });
  (sandbox.permissions as { file_system: { entries: unknown[] } }).file_system.entries.push({
    path: { type: 'glob_pattern', pattern: `${root}/keys/**/*.key` },
    access: 'deny',
  });
  return sandbox;
}

describe.skipIf(!LINUX)(
  LINUX
    ? 'a read under a launch set up before the denied file existed (real bwrap)'
    : `late denied reads: SKIPPED on ${process.platform}, the launch here is bwrap's (Linux only)`,
  () => {
    it.each(['node', 'bun'] as const)(
      'is refused by the %s helper where the file physically is',
      async (runtime) => {
        const broker = createBroker({ pool: false, helperRuntime: runtime, precheck: false });
        brokers.push(broker);
        const { launch, guard } = await broker.prepareSandbox(context());
        writeFileSync(join(root, 'secret'), 'denied content');
        mkdirSync(join(root, 'keys', 'deep'));
        writeFileSync(join(root, 'keys', 'deep', 'late.key'), 'private key');
        symlinkSync('secret', join(root, 'alias'));
        const read = (path: string) =>
          runHelper(
            launch,
            {
              operation: 'fs/readFile',
              params: { path },
              sandboxed: true,
              guard,
            } as unknown as HelperRequest,
            {},
          );
        for (const path of [
          join(root, 'secret'),
          join(root, 'alias'),
          join(root, 'keys', 'deep', 'late.key'),
          join(root, 'keys', 'deep', '..', 'deep', 'late.key'),
        ]) {
          const reply = await read(path);
          expect(reply.status, path).toBe('error');
          expect(reply.status === 'error' && reply.payload.data.errorKind, path).toBe('permission_denied');
        }
        // The same launch still reads what the policy allows.
        const allowed = await read(join(root, 'notes.txt'));
        expect(allowed.status === 'ok' && allowed.binary?.data.toString()).toBe('notes');
        expect(readFileSync(join(root, 'secret'), 'utf8')).toBe('denied content');
      },
    );
  },
);
