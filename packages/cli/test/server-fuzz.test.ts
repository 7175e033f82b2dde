import { isErrorKind } from '@fs-sandbox/policy';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeServer, type Reply, StdioClient } from './support/fake-server.js';

const MAX_MESSAGE_BYTES = 4096;
const CODES = new Set([-32600, -32601, -32602, -32603, -32004]);
const METHODS = [
  'initialize',
  'initialized',
  'fs/readFile',
  'fs/writeFile',
  'fs/open',
  'fs/readBlock',
  'fs/close',
  'fs/walk',
  'fs/writeBlock',
  '',
  '__proto__',
  'constructor',
  'fs/\u0000',
];

function expectWellFormedError(reply: Reply | undefined): void {
  expect(reply?.error, JSON.stringify(reply)).toBeDefined();
  const error = reply?.error as NonNullable<Reply['error']>;
  expect(CODES.has(error.code)).toBe(true);
  expect(isErrorKind(error.data.errorKind)).toBe(true);
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeLessThan(1024);
}

function expectWellFormedReply(reply: Reply | undefined): void {
  if (reply && 'result' in reply) expect(typeof reply.result).toBe('object');
  else expectWellFormedError(reply);
}

/** What the server must do with one line: answer with an error, or stay silent (notification, blank). */
function answersWithError(line: string): boolean {
  if (/^[ \t\r]*$/.test(line)) return false;
  if (Buffer.byteLength(line) > MAX_MESSAGE_BYTES) return true;
  try {
    const value = JSON.parse(line) as unknown;
    const isNotification =
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      typeof (value as { method?: unknown }).method === 'string' &&
      !Object.hasOwn(value, 'id');
    return !isNotification;
  } catch {
    return true;
  }
}

const noNewline = (text: string) => text.replaceAll('\n', ' ');

/** Lines that are not requests: broken JSON, bytes, JSON values of the wrong shape, huge lines. */
const hostileLine = fc.oneof(
  fc.string({ maxLength: 200 }).map(noNewline),
  fc.string({ unit: 'binary', maxLength: 200 }).map(noNewline),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? 'null'),
  fc
    .record({ id: fc.oneof(fc.double(), fc.constant(null), fc.boolean(), fc.object()), method: fc.string() })
    .map((value) => JSON.stringify(value)),
  fc.record({ id: fc.integer(), result: fc.jsonValue() }).map((value) => JSON.stringify(value)),
  fc
    .integer({ min: MAX_MESSAGE_BYTES + 1, max: 20 * MAX_MESSAGE_BYTES })
    .map((size) => `{"id":1,"x":"${'y'.repeat(size)}"}`),
  fc.constantFrom(
    '{',
    '}',
    '[]',
    '""',
    '{"id":1,"method":"initialize"',
    '\u0000',
    '\uFEFF{}',
    '{"__proto__":{"id":1}}',
  ),
);

/** Hostile values for the fields the server itself reads. */
const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    -1,
    2 ** 53,
    1e308,
    -0,
    0.5,
    '',
    'x'.repeat(40),
    '../../etc/passwd',
    'file:///etc/shadow',
    null,
  ),
  fc.string({ maxLength: 40 }),
);

const hostileParams = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(
    fc.constantFrom(
      'handleId',
      'offset',
      'len',
      'path',
      'mode',
      'sandbox',
      'clientName',
      'dataBase64',
      '__proto__',
    ),
    hostileValue,
  ),
);

describe('property: hostile input never breaks the server', () => {
  it('answers every non-request line with an error and keeps serving the connection', async () => {
    const { server } = makeServer({ maxMessageBytes: MAX_MESSAGE_BYTES });
    await fc.assert(
      fc.asyncProperty(fc.array(hostileLine, { maxLength: 12 }), async (lines) => {
        const client = new StdioClient(server);
        for (const line of lines) client.send(`${line}\n`);
        const probe = await client.request('initialize', { clientName: 'probe' }, 'probe');
        expect(probe.result).toHaveProperty('sessionId');
        const expected = lines.filter(answersWithError).length;
        const replies = await client.waitForReplies(expected + 1);
        expect(replies).toHaveLength(expected + 1);
        for (const reply of replies.filter((reply) => reply.id !== 'probe')) expectWellFormedError(reply);
        await client.end();
      }),
      { numRuns: 150 },
    );
  });

  it('answers every request exactly once, well formed, whatever its method, id and params', async () => {
    const { server, broker } = makeServer({ maxMessageBytes: MAX_MESSAGE_BYTES });
    broker.files.set('file:///etc/shadow', Buffer.from('x'));
    const request = fc.record({
      method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 30 })),
      params: fc.option(hostileParams, { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(request, { maxLength: 30 }), fc.boolean(), async (requests, handshake) => {
        const client = new StdioClient(server);
        if (handshake) await client.handshake();
        requests.forEach(({ method, params }, index) => {
          client.send(JSON.stringify({ jsonrpc: '2.0', id: index, method, params }));
        });
        for (let index = 0; index < requests.length; index += 1)
          expectWellFormedReply(await client.replyFor(index));
        const probe = await client.request('fs/close', { handleId: 'probe' }, 'probe');
        if (handshake) expect(probe).toEqual({ id: 'probe', result: {} });
        else expectWellFormedError(probe);
        await client.end();
        // Nothing left behind: every connection ends with no handles and nothing running.
        expect(server.stats()).toMatchObject({ requests: { inFlight: 0, queued: 0 }, handles: { open: 0 } });
      }),
      { numRuns: 150 },
    );
  });
});
