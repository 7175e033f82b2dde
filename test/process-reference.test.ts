import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';
import { codexBinary } from './support/codex-binary.js';
import { sandboxContext, uri } from './support/pool.js';
import { startReferenceExecServer } from './support/reference-exec-server.js';

/**
 * The same process/* sequence, live, against `fs-sandbox serve --listen stdio` and the reference
 * Codex exec-server (`codex exec-server --listen stdio` from the pinned @openai/codex dev
 * dependency), compared reply by reply and notification by notification. Where ours answers
 * differently on purpose, DIFFERENCES names the step, both answers and why; fields we add beyond
 * the reference's are listed in EXTRA_FIELDS. Ours is run twice: with `sandbox: null` as the
 * reference is, and under a bwrap context, which must not change a single reply shape.
 */

const REFERENCE = codexBinary();

let dir: string;
let work: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-process-reference-'));
  work = join(dir, 'work');
  await mkdir(work);
  await mkdir(join(dir, 'codex-home'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Peer = 'reference' | 'ours' | 'ours under bwrap';

function startPeer(peer: Peer): ServeProcess {
  if (peer !== 'reference') return ServeProcess.start([], { cwd: work });
  return startReferenceExecServer(work, join(dir, 'codex-home'));
}

/** What is compared of one reply: a result as it is, an error by code, message and `data.kind`. */
type Answer = { result: unknown } | { error: { code: number; message: string; kind?: unknown } };

/**
 * Fields ours adds to the reference's replies, dropped before comparing. Each is additive: a
 * client that does not know it ignores it (serde skips unknown fields).
 */
const EXTRA_FIELDS = {
  'error.data.errorKind': 'every error of ours carries the typed error kind (README, "Error kinds")',
  'error.data.field': 'a params error names the offending field',
  'result.capReached': 'process/read says when outputBytesCap cut the output (beyond the reference)',
  'result.timedOut': 'process/read says when timeoutMs killed the process (beyond the reference)',
};

function answerOf(reply: WireReply): Answer {
  const message = structuredClone(reply) as unknown as Record<string, Record<string, unknown>>;
  for (const path of Object.keys(EXTRA_FIELDS)) {
    const [top, ...rest] = path.split('.') as [string, ...string[]];
    const last = rest.pop() as string;
    let holder: Record<string, unknown> | undefined = message[top];
    for (const key of rest) holder = holder?.[key] as Record<string, unknown> | undefined;
    if (holder !== undefined) delete holder[last];
  }
  if (message.error !== undefined) {
    const { code, message: text, data } = message.error as { code: number; message: string; data?: object };
    const extra = data !== undefined && Object.keys(data).length > 0 ? data : {};
    return { error: { code, message: text, ...extra } };
  }
  return { result: normaliseResult(message.result as Record<string, unknown>) };
}

/** Output chunking follows pipe timing, so read results compare the bytes per stream and the seqs' order. */
function normaliseResult(result: Record<string, unknown>): unknown {
  if (!Array.isArray(result.chunks)) return result;
  const chunks = result.chunks as Array<{ seq: number; stream: string; chunk: string }>;
  const text = (stream: string) =>
    chunks
      .filter((chunk) => chunk.stream === stream)
      .map((chunk) => Buffer.from(chunk.chunk, 'base64').toString())
      .join('');
  const seqs = chunks.map((chunk) => chunk.seq);
  return {
    ...result,
    chunks: {
      stdout: text('stdout'),
      stderr: text('stderr'),
      ascending: seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number)),
    },
  };
}

/**
 * One process's notifications: its output (consecutive chunks of one stream merged, bytes
 * decoded), then its exit and close, each flagged if its seq is not the next one. The reference
 * sometimes sends `process/exited` before the last output chunk (it reports the exit as the process
 * ends, not once the pipes are drained); ours always sends every chunk first. So output order is
 * compared among outputs, and the end events after them.
 */
function eventsOf(serve: ServeProcess, processId: string): unknown[] {
  const outputs: Array<Record<string, unknown>> = [];
  const ends: Array<Record<string, unknown>> = [];
  let expectedSeq = 1;
  for (const line of serve.rawLines) {
    const message = JSON.parse(line) as { method?: string; params?: Record<string, unknown> };
    if (message.method === undefined || message.params?.processId !== processId) continue;
    const { seq, chunk, ...params } = message.params;
    // The first process of that id only: ours lets an exited id start again (see DIFFERENCES).
    if (seq === 1 && expectedSeq > 1) break;
    const flag = seq === expectedSeq ? {} : { outOfOrderSeq: seq };
    expectedSeq = (seq as number) + 1;
    if (message.method !== 'process/output') {
      ends.push({ method: message.method, ...params, ...flag });
      continue;
    }
    const text = Buffer.from(chunk as string, 'base64').toString();
    const last = outputs.at(-1);
    if (last !== undefined && last.stream === params.stream) last.text = `${last.text}${text}`;
    else outputs.push({ method: message.method, ...params, text, ...flag });
  }
  return [...outputs, ...ends];
}

/** A process's output so far, every stream's bytes in order. */
function outputOf(serve: ServeProcess, processId: string): string {
  return serve.rawLines
    .map((line) => JSON.parse(line) as { method?: string; params?: Record<string, unknown> })
    .filter((m) => m.method === 'process/output' && m.params?.processId === processId)
    .map((m) => Buffer.from(String(m.params?.chunk), 'base64').toString())
    .join('');
}

async function closedNotification(serve: ServeProcess, processId: string, count = 1): Promise<void> {
  const closes = () =>
    serve.rawLines.filter(
      (line) => line.includes('"process/closed"') && line.includes(`"processId":"${processId}"`),
    ).length;
  for (let i = 0; i < 1000 && closes() < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** The sequence: each step's answer by name, then every process's notifications. */
async function transcript(peer: Peer): Promise<Record<string, unknown>> {
  const serve = startPeer(peer);
  const steps: Record<string, unknown> = {};
  const call = async (step: string, method: string, params: unknown) => {
    steps[step] = answerOf(await serve.request(method, params));
  };
  const sandbox =
    peer === 'ours under bwrap'
      ? sandboxContext({ read: ['/usr', '/bin', '/lib', '/lib64', '/etc'], write: [work] })
      : null;
  const start = (processId: string, argv: string[], extra: Record<string, unknown> = {}) => ({
    processId,
    argv,
    cwd: uri(work),
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox,
    ...extra,
  });
  const init = await serve.request('initialize', { clientName: 'codex-environment' });
  // The fields the reference's client reads (shell, cwd); the rest describe each executor.
  const clientFields = (info: unknown) => {
    const { shell, cwd } = info as { shell: unknown; cwd: unknown };
    return { shell, cwd };
  };
  steps['initialize: environmentInfo'] = clientFields(
    (init.result as { environmentInfo: unknown }).environmentInfo,
  );
  serve.notify('initialized', {});
  steps['environment/info'] = clientFields((await serve.request('environment/info', {})).result);

  const script = 'printf out; sleep 0.2; printf err >&2; read line; printf "got:%s" "$line"; exit 3';
  await call(
    'start with output and piped stdin',
    'process/start',
    start('p1', ['/bin/sh', '-c', script], { pipeStdin: true }),
  );
  for (let i = 0; i < 500 && !serve.rawLines.some((l) => l.includes('"stream":"stderr"')); i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  await call('write stdin', 'process/write', {
    processId: 'p1',
    chunk: Buffer.from('hello\n').toString('base64'),
    writeId: 'w1',
  });
  await closedNotification(serve, 'p1');
  await call('read after exit', 'process/read', { processId: 'p1', afterSeq: 0 });
  await call('read one chunk (maxBytes 1)', 'process/read', { processId: 'p1', afterSeq: 0, maxBytes: 1 });
  await call('write stdin after exit', 'process/write', { processId: 'p1', chunk: 'aA==', writeId: 'w2' });

  await call('start a long one', 'process/start', start('p2', ['/bin/sleep', '30']));
  await call('terminate running', 'process/terminate', { processId: 'p2' });
  await closedNotification(serve, 'p2');
  await call('terminate exited', 'process/terminate', { processId: 'p2' });

  await call('read unknown id', 'process/read', { processId: 'nope' });
  await call('write unknown id', 'process/write', { processId: 'nope', chunk: 'aA==', writeId: 'w' });
  await call('terminate unknown id', 'process/terminate', { processId: 'nope' });
  await call('signal unknown id', 'process/signal', { processId: 'nope', signal: 'interrupt' });

  await call('start p3', 'process/start', start('p3', ['/bin/sh', '-c', 'echo ready; exec /bin/sleep 30']));
  await call('start a live id again', 'process/start', start('p3', ['/bin/true']));
  // Interrupted once it runs, as a person would: see the README on an interrupt during set-up.
  for (
    let i = 0;
    i < 500 && !serve.rawLines.some((l) => l.includes('"process/output"') && l.includes('"p3"'));
    i++
  )
    await new Promise((resolve) => setTimeout(resolve, 10));
  await call('interrupt running', 'process/signal', { processId: 'p3', signal: 'interrupt' });
  await closedNotification(serve, 'p3');

  await call('empty argv', 'process/start', start('p4', []));
  await call('start an exited id again', 'process/start', start('p1', ['/bin/true']));
  const restarted = 'result' in (steps['start an exited id again'] as Answer);
  await call('program not found', 'process/start', start('p5', ['/nonexistent/program']));
  await call('start without stdin', 'process/start', start('p6', ['/bin/cat']));
  await closedNotification(serve, 'p6');
  await call('write without stdin', 'process/write', { processId: 'p6', chunk: 'aA==', writeId: 'w' });
  await call('environment/status', 'environment/status', {});

  const onTerminal =
    '[ -t 0 ] && [ -t 1 ] && echo on-a-terminal; stty size; read line; echo "got:$line"; exit 2';
  await call(
    'start on a terminal',
    'process/start',
    start('p7', ['/bin/sh', '-c', onTerminal], { tty: true }),
  );
  for (let i = 0; i < 500 && !outputOf(serve, 'p7').includes('24 80'); i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  // No pipeStdin: a terminal's input is open all the same.
  await call('type on the terminal', 'process/write', {
    processId: 'p7',
    chunk: Buffer.from('hello\n').toString('base64'),
    writeId: 'w',
  });
  if ('result' in (steps['start on a terminal'] as Answer)) await closedNotification(serve, 'p7');
  if (restarted) await closedNotification(serve, 'p1', 2);

  for (const id of ['p1', 'p2', 'p3', 'p6', 'p7']) steps[`notifications of ${id}`] = eventsOf(serve, id);
  serve.child.stdin.end();
  await serve.exited;
  return steps;
}

/** What the reference's terminal shows for `onTerminal` (its echo of the typed line included). */
const TERMINAL_EVENTS = [
  {
    method: 'process/output',
    processId: 'p7',
    stream: 'pty',
    text: 'on-a-terminal\r\n24 80\r\nhello\r\ngot:hello\r\n',
  },
  { method: 'process/exited', processId: 'p7', exitCode: 2, sandboxDenied: false },
  { method: 'process/closed', processId: 'p7' },
];
const UNSANDBOXED_TERMINAL =
  'a terminal is allocated inside the sandbox only (its own devpts and session), so a command the context runs unsandboxed gets none';

/** Where ours answers differently on purpose: both answers, and why. */
const DIFFERENCES: Record<
  string,
  { why: string; reference: unknown; ours: unknown; oursUnderBwrap?: unknown }
> = {
  'start on a terminal': {
    why: UNSANDBOXED_TERMINAL,
    reference: { result: { processId: 'p7', sandboxType: 'none' } },
    ours: {
      error: {
        code: -32603,
        message: 'a terminal is given to sandboxed commands only',
        kind: 'ttyUnavailable',
      },
    },
    oursUnderBwrap: { result: { processId: 'p7', sandboxType: 'linuxSeccomp' } },
  },
  'type on the terminal': {
    why: UNSANDBOXED_TERMINAL,
    reference: { result: { status: 'accepted' } },
    ours: { result: { status: 'unknownProcess' } },
    oursUnderBwrap: { result: { status: 'accepted' } },
  },
  'notifications of p7': {
    why: UNSANDBOXED_TERMINAL,
    reference: TERMINAL_EVENTS,
    ours: [],
    oursUnderBwrap: TERMINAL_EVENTS,
  },
  'write stdin after exit': {
    why: 'the reference accepts bytes nobody will read; ours says the stdin is gone (the process exited)',
    reference: { result: { status: 'accepted' } },
    ours: { result: { status: 'stdinClosed' } },
  },
  'start an exited id again': {
    why: 'an id is reusable once its process closed (issue 18); the reference keeps it taken for the connection',
    reference: { error: { code: -32600, message: 'process p1 already exists' } },
    ours: { result: { processId: 'p1', sandboxType: 'none' } },
    oursUnderBwrap: { result: { processId: 'p1', sandboxType: 'linuxSeccomp' } },
  },
  'notifications of p3': {
    why: 'interrupt: under bwrap the SIGINT would reach bwrap, not the command, and could end bwrap mid-set-up with the sandbox left running, so a sandboxed command is killed (137); unsandboxed it gets SIGINT as in the reference (130)',
    reference: [
      { method: 'process/output', processId: 'p3', stream: 'stdout', text: 'ready\n' },
      { method: 'process/exited', processId: 'p3', exitCode: 130, sandboxDenied: false },
      { method: 'process/closed', processId: 'p3' },
    ],
    ours: [
      { method: 'process/output', processId: 'p3', stream: 'stdout', text: 'ready\n' },
      { method: 'process/exited', processId: 'p3', exitCode: 130, sandboxDenied: false },
      { method: 'process/closed', processId: 'p3' },
    ],
    oursUnderBwrap: [
      { method: 'process/output', processId: 'p3', stream: 'stdout', text: 'ready\n' },
      { method: 'process/exited', processId: 'p3', exitCode: 137, sandboxDenied: false },
      { method: 'process/closed', processId: 'p3' },
    ],
  },
  'program not found': {
    why: 'same data.kind; the code is our not_found kind’s and the message names the program (and, sandboxed, that the sandbox does not show it) instead of "(os error 2)"',
    reference: {
      error: { code: -32603, message: 'No such file or directory (os error 2)', kind: 'spawnNotFound' },
    },
    ours: {
      error: {
        code: -32004,
        message: '/nonexistent/program: spawn /nonexistent/program ENOENT',
        kind: 'spawnNotFound',
      },
    },
    oursUnderBwrap: {
      error: {
        code: -32004,
        message: '/nonexistent/program: no such program (the sandbox does not show it)',
        kind: 'spawnNotFound',
      },
    },
  },
};

const SANDBOXED_STARTS = [
  'start with output and piped stdin',
  'start a long one',
  'start p3',
  'start without stdin',
  'start on a terminal',
];

describe.skipIf(REFERENCE === null)(
  REFERENCE === null
    ? `process/* against the reference exec-server: SKIPPED, @openai/codex 0.171.0 installed no binary for ${process.platform}-${process.arch}`
    : 'process/* against the reference Codex exec-server 0.171.0 (live, same sequence)',
  () => {
    let reference: Record<string, unknown>;
    beforeAll(async () => {
      reference = await transcript('reference');
    }, 60_000);

    for (const peer of ['ours', 'ours under bwrap'] as const) {
      it(`${peer}: every reply and notification sequence is the reference's, except the documented differences`, async () => {
        const ours = await transcript(peer);
        expect(Object.keys(ours)).toEqual(Object.keys(reference));
        for (const [step, answer] of Object.entries(reference)) {
          const difference = DIFFERENCES[step];
          if (difference !== undefined) {
            expect({ step, answer }).toEqual({ step, answer: difference.reference });
            const expected =
              peer === 'ours' ? difference.ours : (difference.oursUnderBwrap ?? difference.ours);
            expect({ step, answer: ours[step] }).toEqual({ step, answer: expected });
          } else if (peer === 'ours under bwrap' && SANDBOXED_STARTS.includes(step)) {
            // The one field a sandbox changes: which sandbox ran it.
            expect({ step, answer: ours[step] }).toEqual({
              step,
              answer: { result: { ...(answer as { result: object }).result, sandboxType: 'linuxSeccomp' } },
            });
          } else {
            expect({ step, answer: ours[step] }).toEqual({ step, answer });
          }
        }
      }, 60_000);
    }
  },
);
