import { existsSync, readdirSync } from 'node:fs';
import { LIMITS } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, type Fixture } from './fixtures/conformance/fixture-tree.js';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';

/**
 * Requests that used to pin the server's CPU (a path of half a million components; a policy of
 * 100 000 entries) and a patch inside a batch that skipped its approval, against the real program
 * and the real broker under bwrap: each is answered at once, typed, and the connection keeps
 * serving; nothing is written that the same patch alone would not write.
 */

let fixture: Fixture;
let served: ServeProcess;

beforeAll(async () => {
  ensureBuilt();
  fixture = await buildFixture();
  served = ServeProcess.start();
  await served.handshake();
});

afterAll(async () => {
  expect(await served.stop()).toBe(0);
  await fixture.cleanup();
});

/** The server still answers a plain request on the same connection. */
async function stillServing(): Promise<void> {
  const reply = await served.request('fs/getMetadata', {
    path: fixture.uri('ro/hello.txt'),
    sandbox: fixture.contexts.readOnly,
  });
  expect(reply.result).toMatchObject({ isFile: true });
}

describe('bounded requests through serve', () => {
  it('refuses a path longer than the native limit before walking it, then keeps serving', async () => {
    for (const components of [500_000, LIMITS.pathMaxBytes / 2]) {
      const reply = await served.request('fs/readFile', {
        path: fixture.uri(`rw/${'a/'.repeat(components)}`),
        sandbox: fixture.contexts.workspaceWrite,
      });
      expect(reply.error?.data.errorKind).toBe('invalid_params');
      expect(reply.error?.message).toMatch(/at most \d+ (bytes|are allowed)/);
    }
    // Just under the limit: walked, and not found.
    const under = await served.request('fs/readFile', {
      path: fixture.uri(`rw/${'a/'.repeat(Math.floor((LIMITS.pathMaxBytes - fixture.root.length) / 2) - 8)}`),
      sandbox: fixture.contexts.workspaceWrite,
    });
    expect(under.error?.data.errorKind).toBe('not_found');
    await stillServing();
  });

  it('refuses a policy of more entries than the limit, then keeps serving', async () => {
    for (const count of [100_000, LIMITS.policyMaxEntries + 1]) {
      const entries = Array.from({ length: count }, (_, index) => ({
        path: { type: 'path', path: fixture.uri(`rw/denied-${index}`) },
        access: 'deny',
      }));
      const reply = await served.request('fs/getMetadata', {
        path: fixture.uri('ro/hello.txt'),
        sandbox: {
          permissions: {
            type: 'managed',
            file_system: { type: 'restricted', entries },
            network: 'restricted',
          },
        },
      });
      expect(reply.error?.data.errorKind).toBe('invalid_params');
      expect(reply.error?.message).toContain(`at most ${LIMITS.policyMaxEntries} file_system entries`);
    }
    await stillServing();
  });

  it('refuses a patch naming a path longer than the limit', async () => {
    const reply = await served.request('fs/applyPatch', {
      patch: `*** Begin Patch\n*** Add File: ${'b/'.repeat(LIMITS.pathMaxBytes)}x\n+x\n*** End Patch`,
      cwd: fixture.uri('rw'),
      sandbox: fixture.contexts.workspaceWrite,
    });
    expect(reply.error?.data.errorKind).toBe('invalid_params');
    expect(existsSync(fixture.native('rw/b'))).toBe(false);
  });
});

describe('fs/applyPatch inside fs/batch through serve', () => {
  it('asks for approval exactly as alone, and writes nothing it asked about', async () => {
    const patch = (name: string) => `*** Begin Patch\n*** Add File: ${name}\n+x\n*** End Patch`;
    const params = (name: string, sandbox: unknown) => ({
      patch: patch(name),
      cwd: fixture.uri('rw'),
      approvalPolicy: 'unless-trusted',
      sandbox,
    });
    for (const sandbox of [fixture.contexts.workspaceWrite, null]) {
      const alone = await served.request('fs/applyPatch', params('alone', sandbox));
      expect(alone.result).toMatchObject({ status: 'needs_approval' });
      const { sandbox: _, ...inner } = params('batched', sandbox);
      const batch = await served.request('fs/batch', {
        operations: [{ method: 'fs/applyPatch', params: inner }],
        sandbox,
      });
      expect(batch.result).toEqual({
        results: [
          {
            result: {
              ...(alone.result as object),
              changes: [{ kind: 'add', path: fixture.native('rw/batched') }],
            },
          },
        ],
      });
    }
    expect(readdirSync(fixture.native('rw')).filter((name) => !name.startsWith('.'))).toEqual([
      'dangling-out',
      'dirlink-out',
    ]);
  });
});
