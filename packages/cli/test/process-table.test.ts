import type { CommandLaunchSpec } from '@fs-sandbox/broker/internal';
import { LIMITS } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { ProcessTable, type StartOptions } from '../src/server/process-table.js';

/**
 * The per-connection process table with real (unsandboxed) /bin/sh commands: the sandbox is the
 * launch's business, tested end to end; here the id rules, bounds, retained output, timeouts and
 * the pause on a full connection.
 */

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

function table(room: { value: boolean } = { value: true }) {
  const sent: Sent[] = [];
  const processes = new ProcessTable({
    notify: (method, params) => sent.push({ method, params }),
    hasRoom: () => room.value,
  });
  const closed = (processId: string) =>
    waitFor(() => sent.some((n) => n.method === 'process/closed' && n.params.processId === processId));
  return { processes, sent, closed, room };
}

const shell = (script: string): CommandLaunchSpec => ({
  backend: null,
  sandboxProgram: null,
  sandboxArgs: [],
  argv: ['/bin/sh', '-c', script],
  env: { PATH: '/usr/bin:/bin' },
  cwd: '/',
});

function options(processId: string, script: string, extra: Partial<StartOptions> = {}): StartOptions {
  return {
    processId,
    launch: shell(script),
    pipeStdin: false,
    tty: false,
    outputBytesCap: null,
    timeoutMs: null,
    ...extra,
  };
}

async function start(processes: ProcessTable, start: StartOptions): Promise<void> {
  processes.reserve(start.processId);
  await processes.start(start);
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stdoutOf = (sent: Sent[], processId: string) =>
  sent
    .filter((n) => n.method === 'process/output' && n.params.processId === processId)
    .map((n) => Buffer.from(n.params.chunk as string, 'base64').toString())
    .join('');

describe('ProcessTable', () => {
  it('refuses a live id, frees an exited one, and a failed start releases its reservation', async () => {
    const { processes, closed } = table();
    await start(processes, options('a', 'sleep 5'));
    expect(() => processes.reserve('a')).toThrow('process a already exists');
    processes.terminate('a');
    await closed('a');
    expect(() => processes.reserve('a')).not.toThrow();
    processes.release('a');
    processes.reserve('b');
    processes.release('b');
    await expect(processes.read('b', 0, null, 0)).rejects.toThrow('unknown process id b');
    processes.closeAll();
  });

  it(`runs at most ${LIMITS.processesPerConnection} processes per connection; an exited one makes room`, async () => {
    const { processes, closed } = table();
    for (let i = 0; i < LIMITS.processesPerConnection; i++) processes.reserve(`p${i}`);
    expect(() => processes.reserve('one-more')).toThrow(/too many processes on this connection/);
    for (let i = 1; i < LIMITS.processesPerConnection; i++) processes.release(`p${i}`);
    processes.release('p0');
    await start(processes, options('quick', 'true'));
    await closed('quick');
    expect(processes.liveCount).toBe(0);
    processes.closeAll();
  });

  it('numbers output, exit and close in one sequence; read returns what follows afterSeq', async () => {
    const { processes, sent, closed } = table();
    await start(processes, options('s', 'echo one; sleep 0.1; echo two >&2; exit 4'));
    await closed('s');
    expect(sent.map((n) => [n.method, n.params.seq])).toEqual([
      ['process/output', 1],
      ['process/output', 2],
      ['process/exited', 3],
      ['process/closed', 4],
    ]);
    expect(sent[2]?.params).toEqual({ processId: 's', seq: 3, exitCode: 4, sandboxDenied: false });
    const all = await processes.read('s', 0, null, 0);
    expect(all.chunks.map((c) => [c.seq, c.stream])).toEqual([
      [1, 'stdout'],
      [2, 'stderr'],
    ]);
    expect(all).toMatchObject({ nextSeq: 5, exited: true, exitCode: 4, closed: true, timedOut: false });
    const later = await processes.read('s', 1, null, 0);
    expect(later.chunks.map((c) => c.seq)).toEqual([2]);
  });

  it('keeps only the last LIMITS.processRetainedOutputBytes for process/read, and maxBytes splits reads', async () => {
    const { processes, sent, closed } = table();
    const total = LIMITS.processRetainedOutputBytes * 2;
    await start(processes, options('big', `head -c ${total} /dev/zero`));
    await closed('big');
    const delivered = sent
      .filter((n) => n.method === 'process/output')
      .reduce((sum, n) => sum + Buffer.from(n.params.chunk as string, 'base64').length, 0);
    expect(delivered).toBe(total);
    const kept = await processes.read('big', 0, null, 0);
    const keptBytes = kept.chunks.reduce((sum, c) => sum + Buffer.from(c.chunk, 'base64').length, 0);
    expect(keptBytes).toBeLessThanOrEqual(LIMITS.processRetainedOutputBytes);
    expect(keptBytes).toBeGreaterThan(0);
    expect(kept.chunks[0]?.seq).toBeGreaterThan(1);
    const first = await processes.read('big', 0, 1, 0);
    expect(first.chunks).toHaveLength(1);
    expect(first.nextSeq).toBe((first.chunks[0]?.seq as number) + 1);
    expect((await processes.read('big', first.nextSeq - 1, 1, 0)).chunks[0]?.seq).toBe(first.nextSeq);
  });

  it('a terminal process: its stdin is writable without pipeStdin and carries frames, its output is `pty`', async () => {
    const { processes, sent, closed } = table();
    // The launch stands in for the sandbox's terminal launcher: it shows the bytes that reach it.
    await start(
      processes,
      options('t', 'head -c 7 | od -An -tx1 | tr -d " \\n"; echo err >&2', { tty: true }),
    );
    expect(processes.write('t', Buffer.from('hi')).status).toBe('accepted');
    await closed('t');
    const outputs = sent.filter((n) => n.method === 'process/output');
    expect(new Set(outputs.map((n) => n.params.stream))).toEqual(new Set(['pty']));
    // One input frame: type 0, length 2 (big-endian), the bytes.
    expect(stdoutOf(sent, 't')).toBe('00000000026869err\n');
    expect(processes.write('t', Buffer.from('late')).status).toBe('stdinClosed');
  });

  it('cuts output at outputBytesCap and says capReached', async () => {
    const { processes, sent, closed } = table();
    await start(processes, options('cap', 'head -c 100000 /dev/zero | tr "\\0" a', { outputBytesCap: 1000 }));
    await closed('cap');
    expect(stdoutOf(sent, 'cap')).toBe('a'.repeat(1000));
    expect(sent.filter((n) => n.params.capReached === true)).toHaveLength(1);
    expect((await processes.read('cap', 0, null, 0)).capReached).toBe(true);
  });

  it('kills a process past timeoutMs and reports timedOut', async () => {
    const { processes, sent, closed } = table();
    await start(processes, options('slow', 'sleep 30', { timeoutMs: 100 }));
    await closed('slow');
    expect(sent.find((n) => n.method === 'process/exited')?.params).toMatchObject({
      exitCode: 137,
      timedOut: true,
    });
    expect((await processes.read('slow', 0, null, 0)).timedOut).toBe(true);
  });

  it('writes stdin only when piped; terminate says whether it was running; unknown ids', async () => {
    const { processes, sent, closed } = table();
    await start(processes, options('cat', 'cat', { pipeStdin: true }));
    expect(processes.write('cat', Buffer.from('hi\n'))).toEqual({ status: 'accepted' });
    await waitFor(() => stdoutOf(sent, 'cat') === 'hi\n');
    expect(processes.terminate('cat')).toEqual({ running: true });
    await closed('cat');
    expect(processes.terminate('cat')).toEqual({ running: false });
    expect(processes.write('cat', Buffer.from('x'))).toEqual({ status: 'stdinClosed' });
    expect(processes.write('nope', Buffer.from('x'))).toEqual({ status: 'unknownProcess' });
    expect(processes.terminate('nope')).toEqual({ running: false });
    await start(processes, options('closed-stdin', 'sleep 5'));
    expect(processes.write('closed-stdin', Buffer.from('x'))).toEqual({ status: 'stdinClosed' });
    processes.closeAll();
  });

  it('closeStdin ends the stdin after the chunk: the command reads EOF', async () => {
    const { processes, sent, closed } = table();
    await start(processes, options('wc', 'wc -c', { pipeStdin: true }));
    expect(processes.write('wc', Buffer.from('abc'))).toEqual({ status: 'accepted' });
    expect(processes.write('wc', Buffer.from('de'), true)).toEqual({ status: 'accepted' });
    await closed('wc');
    expect(stdoutOf(sent, 'wc').trim()).toBe('5');
    expect(processes.write('wc', Buffer.alloc(0), true)).toEqual({ status: 'stdinClosed' });
  });

  it('a read with waitMs returns as soon as output comes', async () => {
    const { processes } = table();
    await start(processes, options('w', 'sleep 0.2; echo late'));
    const started = Date.now();
    const read = await processes.read('w', 0, null, 10_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(Buffer.from(read.chunks[0]?.chunk as string, 'base64').toString()).toBe('late\n');
    processes.closeAll();
  });

  it("pauses every command while the connection's unsent output is full, and resumes when it drains", async () => {
    const room = { value: true };
    const { processes, sent, closed } = table(room);
    room.value = false;
    await start(processes, options('loud', 'head -c 50000000 /dev/zero'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const whilePaused = sent.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Paused from the start: at most what was already read from the pipe before the pause took.
    expect(sent.length).toBe(whilePaused);
    expect(sent.some((n) => n.method === 'process/exited')).toBe(false);
    room.value = true;
    processes.resumeOutput();
    await closed('loud');
    expect(sent.find((n) => n.method === 'process/exited')?.params.exitCode).toBe(0);
  });

  it('closeAll kills every process and sends nothing more', async () => {
    const { processes, sent } = table();
    await start(processes, options('x', 'sleep 30'));
    await start(processes, options('y', 'sleep 30'));
    processes.closeAll();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sent.filter((n) => n.method === 'process/exited')).toEqual([]);
    expect(processes.terminate('x')).toEqual({ running: false });
    expect(processes.terminate('y')).toEqual({ running: false });
    expect(() => processes.reserve('z')).toThrow('connection closed');
  });
});
