import { isErrorKind } from '@fs-sandbox/policy';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WireReply } from './fixtures/conformance/serve-process.js';
import { useServedFixture } from './fixtures/conformance/served-fixture.js';

/**
 * Mistyped and hostile requests for every method, against the real program and the real broker
 * (sandboxed ones under real bwrap): each request gets exactly one well-formed reply, and the
 * connection keeps serving. Every path that is a valid URI points into the temp fixture, so nothing
 * the generator writes or removes can land elsewhere.
 */

const CODES = new Set([-32600, -32601, -32602, -32603, -32004]);
const METHODS = [
  'fs/readFile',
  'fs/writeFile',
  'fs/createDirectory',
  'fs/getMetadata',
  'fs/canonicalize',
  'fs/readDirectory',
  'fs/remove',
  'fs/copy',
  'fs/walk',
  'fs/open',
  'fs/readBlock',
  'fs/close',
];

const session = useServedFixture();

function expectWellFormed(reply: WireReply): void {
  if (reply.error === undefined) {
    expect(typeof reply.result).toBe('object');
    return;
  }
  expect(CODES.has(reply.error.code), JSON.stringify(reply.error)).toBe(true);
  expect(isErrorKind(reply.error.data.errorKind)).toBe(true);
  expect(reply.error.message.length).toBeLessThan(8192);
}

describe('property: hostile requests against the real broker', () => {
  it('answers each one exactly once with a well-formed reply and keeps serving', async () => {
    const inside = [
      'ro/hello.txt',
      'ro/sub',
      'ro/link-out',
      'rw/fuzz',
      'rw/fuzz/deeper',
      'rw/dirlink-out/x',
      'outside/secret.txt',
    ];
    // Strings that are never a valid URI elsewhere: anything starting with a scheme is replaced.
    const notAUri = fc
      .string({ maxLength: 30 })
      .map((text) => (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(text) ? `x${text}` : text));
    const path = fc.oneof(
      fc.constantFrom(...inside).map((relative) => session.fixture.uri(relative)),
      notAUri,
      fc.constantFrom(
        'file:',
        'file://',
        'file://host/share',
        'http://x/y',
        'file:///%00',
        'file:///a%2Fb',
        42,
        null,
        [],
        {},
      ),
    );
    const sandbox = fc.oneof(
      fc.constant(null),
      fc
        .constantFrom('readOnly', 'workspaceWrite', 'denySub', 'globRead', 'empty')
        .map((name) => session.fixture.contexts[name as 'readOnly']),
      fc.constant(session.fixture.contexts.projectRoots(false)),
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({
        permissions: fc.jsonValue({ maxDepth: 2 }),
        windowsSandboxLevel: fc.constantFrom('disabled', 'mxc', 7),
      }),
    );
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(-1, 0, 1, 2 ** 53, true, 'eA==', '%%%', ''),
    );
    const params = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record(
        {
          path,
          sourcePath: path,
          destinationPath: path,
          sandbox,
          dataBase64: value,
          recursive: value,
          force: value,
          mode: fc.constantFrom('overwrite', 'create', 'read', 'replace', 'append', 3),
          expectedSha256: value,
          options: fc.oneof(
            value,
            fc.record({
              maxDepth: value,
              maxDirectories: value,
              maxEntries: value,
              followDirectorySymlinks: value,
            }),
          ),
          handleId: fc.oneof(fc.constantFrom('h', 'x'.repeat(33)), value),
          offset: value,
          len: value,
        },
        { requiredKeys: [] },
      ),
    );
    let next = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ method: fc.constantFrom(...METHODS), params }), { maxLength: 6 }),
        async (requests) => {
          const ids = requests.map(({ method, params: p }) => {
            const id = next++;
            session.served.send(JSON.stringify({ id, method, params: p }));
            return id;
          });
          for (const id of ids) expectWellFormed(await session.served.replyFor(id));
          const probe = await session.served.request('fs/readFile', {
            path: session.fixture.uri('ro/hello.txt'),
            sandbox: null,
          });
          expect(probe.result).toEqual({ dataBase64: 'aGVsbG8gc2FuZGJveAo=' });
        },
      ),
      { numRuns: 60 },
    );
    expect(session.served.child.exitCode).toBeNull();
    expect(session.served.stderr).toBe('');
  });
});
