import { existsSync, readdirSync } from 'node:fs';
import { LIMITS } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { useServedFixture } from './fixtures/conformance/served-fixture.js';

/**
 * Requests that used to pin the server's CPU (a path of half a million components; a policy of
 * 100 000 entries) and a patch inside a batch that skipped its approval, against the real program
 * and the real broker under bwrap: each is answered at once, typed, and the connection keeps
 * serving; nothing is written that the same patch alone would not write.
 */

const session = useServedFixture();

/** The server still answers a plain request on the same connection. */
async function stillServing(): Promise<void> {
  const reply = await session.served.request('fs/getMetadata', {
    path: session.fixture.uri('ro/hello.txt'),
    sandbox: session.fixture.contexts.readOnly,
  });
  expect(reply.result).toMatchObject({ isFile: true });
}

describe('bounded requests through serve', () => {
  it('refuses a path longer than the native limit before walking it, then keeps serving', async () => {
    for (const components of [500_000, LIMITS.pathMaxBytes / 2]) {
      const reply = await session.served.request('fs/readFile', {
        path: session.fixture.uri(`rw/${'a/'.repeat(components)}`),
        sandbox: session.fixture.contexts.workspaceWrite,
      });
      expect(reply.error?.data.errorKind).toBe('invalid_params');
      expect(reply.error?.message).toMatch(/at most \d+ (bytes|are allowed)/);
    }
    // Just under the limit: walked, and not found.
    const under = await session.served.request('fs/readFile', {
      path: session.fixture.uri(
        `rw/${'a/'.repeat(Math.floor((LIMITS.pathMaxBytes - session.fixture.root.length) / 2) - 8)}`,
      ),
      sandbox: session.fixture.contexts.workspaceWrite,
    });
    expect(under.error?.data.errorKind).toBe('not_found');
    await stillServing();
  });

  it('refuses a policy of more entries than the limit, then keeps serving', async () => {
    for (const count of [100_000, LIMITS.policyMaxEntries + 1]) {
      const entries = Array.from({ length: count }, (_, index) => ({
        path: { type: 'path', path: session.fixture.uri(`rw/denied-${index}`) },
        access: 'deny',
      }));
      const reply = await session.served.request('fs/getMetadata', {
        path: session.fixture.uri('ro/hello.txt'),
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
    const reply = await session.served.request('fs/applyPatch', {
      patch: `*** Begin Patch\n*** Add File: ${'b/'.repeat(LIMITS.pathMaxBytes)}x\n+x\n*** End Patch`,
      cwd: session.fixture.uri('rw'),
      sandbox: session.fixture.contexts.workspaceWrite,
    });
    expect(reply.error?.data.errorKind).toBe('invalid_params');
    expect(existsSync(session.fixture.native('rw/b'))).toBe(false);
  });
});

describe('fs/applyPatch inside fs/batch through serve', () => {
  it('asks for approval exactly as alone, and writes nothing it asked about', async () => {
    const patch = (name: string) => `*** Begin Patch\n*** Add File: ${name}\n+x\n*** End Patch`;
    const params = (name: string, sandbox: unknown) => ({
      patch: patch(name),
      cwd: session.fixture.uri('rw'),
      approvalPolicy: 'unless-trusted',
      sandbox,
    });
    for (const sandbox of [session.fixture.contexts.workspaceWrite, null]) {
      const alone = await session.served.request('fs/applyPatch', params('alone', sandbox));
      expect(alone.result).toMatchObject({ status: 'needs_approval' });
      const { sandbox: _, ...inner } = params('batched', sandbox);
      const batch = await session.served.request('fs/batch', {
        operations: [{ method: 'fs/applyPatch', params: inner }],
        sandbox,
      });
      expect(batch.result).toEqual({
        results: [
          {
            result: {
              ...(alone.result as object),
              changes: [{ kind: 'add', path: session.fixture.native('rw/batched') }],
            },
          },
        ],
      });
    }
    expect(readdirSync(session.fixture.native('rw')).filter((name) => !name.startsWith('.'))).toEqual([
      'dangling-out',
      'dirlink-out',
    ]);
  });
});
