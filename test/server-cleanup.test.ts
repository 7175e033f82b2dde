import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ensureBuilt, ServeProcess, startWebSocketServer } from './fixtures/conformance/serve-process.js';

/**
 * Closing a connection must abort its running broker calls and leave no helper behind: no bwrap,
 * no helper.cjs, nothing still holding the sandbox's bind mounts. A sandboxed read of a large
 * (sparse) file keeps a helper busy long enough to close the connection under it.
 */

const TOKEN = 'cleanup-token-0123456789abcdef';
let dir: string;
let tokenFile: string;
let bigUri: string;
let sandbox: unknown;

interface Proc {
  pid: number;
  ppid: number;
  args: string;
}

function processes(): Proc[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] as string }));
}

function descendantsOf(pid: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const children = all.filter((proc) => frontier.includes(proc.ppid));
    found.push(...children);
    frontier = children.map((proc) => proc.pid);
  }
  return found;
}

/** Sandboxes of this test, wherever they were reparented: their bwrap names the test's directory. */
function helpersOfThisTest(): Proc[] {
  return processes().filter((proc) => isSandboxHelper(proc) && proc.args.includes(dir));
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const isSandboxHelper = (proc: Proc) => /\bbwrap\b|helper\.cjs/.test(proc.args);

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-cleanup-'));
  tokenFile = join(dir, 'token');
  await writeFile(tokenFile, TOKEN);
  const big = join(dir, 'data', 'big.bin');
  await execFileSync('mkdir', ['-p', join(dir, 'data')]);
  await writeFile(big, '');
  await truncate(big, 400 * 1024 * 1024);
  bigUri = pathToFileURL(big).href;
  sandbox = {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [{ path: { type: 'path', path: pathToFileURL(join(dir, 'data')).href }, access: 'read' }],
      },
      network: 'restricted',
    },
    windowsSandboxLevel: 'disabled',
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('connection close clean-up (real process, real bwrap)', () => {
  it('a WebSocket client that disconnects mid-request leaves no helper process behind', async () => {
    const auditFile = join(dir, 'audit.jsonl');
    const server = await startWebSocketServer([
      '--listen',
      'ws://127.0.0.1:0',
      '--token-file',
      tokenFile,
      '--audit-log',
      auditFile,
    ]);
    try {
      const ws = new WebSocket(server.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'cleanup' } }));
      ws.send(JSON.stringify({ method: 'initialized' }));
      ws.send(JSON.stringify({ id: 2, method: 'fs/readFile', params: { path: bigUri, sandbox } }));
      const pid = server.child.pid as number;
      await waitFor(() => descendantsOf(pid).some(isSandboxHelper), 'the sandboxed helper to start');
      ws.terminate();
      await waitFor(() => descendantsOf(pid).length === 0, 'the helper tree to be killed');
      // The sandbox's inner bwrap (pid 1 of its namespace) is reparented for the moment it takes
      // its parent-death signal to land; it must be gone shortly after.
      await waitFor(() => helpersOfThisTest().length === 0, 'orphaned sandbox processes to disappear', 5_000);
      // The read was aborted, not finished: its audit record is a failure.
      await waitFor(
        () => existsSync(auditFile) && readFileSync(auditFile, 'utf8').includes('fs/readFile'),
        'the audit record',
      );
      expect(JSON.parse(readFileSync(auditFile, 'utf8').trim())).toMatchObject({
        method: 'fs/readFile',
        sandboxed: null,
        outcome: 'error',
        bytesRead: 0,
      });
      // The server itself lives on and serves the next client.
      expect(server.child.exitCode).toBeNull();
      const next = new WebSocket(server.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
      const reply = await new Promise<string>((resolve, reject) => {
        next.once('open', () =>
          next.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'n' } })),
        );
        next.once('message', (data) => resolve(String(data)));
        next.once('error', reject);
      });
      expect(JSON.parse(reply).result.sessionId).toBeTypeOf('string');
      next.close();
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('SIGTERM during a sandboxed request exits cleanly and kills the helper tree', async () => {
    const served = ServeProcess.start();
    await served.handshake();
    served.send(JSON.stringify({ id: 1, method: 'fs/readFile', params: { path: bigUri, sandbox } }));
    await waitFor(() => descendantsOf(served.pid).some(isSandboxHelper), 'the sandboxed helper to start');
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    await waitFor(() => helpersOfThisTest().length === 0, 'orphaned helpers to disappear', 5_000);
    expect(helpersOfThisTest()).toEqual([]);
  });

  it('one SIGTERM stops a server whose client leaves its replies unread', async () => {
    const file = join(dir, 'data', 'unread.bin');
    await writeFile(file, Buffer.alloc(8 * 1024 * 1024, 7));
    const served = ServeProcess.start();
    await served.handshake();
    // The client stops reading: what the server writes backs up in the pipe and in its stdout.
    served.child.stdout.pause();
    for (let id = 1; id <= 8; id++) {
      served.send(
        JSON.stringify({ id, method: 'fs/readFile', params: { path: pathToFileURL(file).href, sandbox } }),
      );
    }
    await waitFor(() => descendantsOf(served.pid).some(isSandboxHelper), 'a sandboxed helper to start');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    await waitFor(() => helpersOfThisTest().length === 0, 'orphaned helpers to disappear', 5_000);
  });

  it('end of stdin finishes accepted requests, answers them, then exits with nothing left', async () => {
    const served = ServeProcess.start();
    await served.handshake();
    served.send(JSON.stringify({ id: 1, method: 'fs/getMetadata', params: { path: bigUri, sandbox } }));
    await served.stop();
    expect((await served.replyFor(1)).result).toMatchObject({ isFile: true, size: 400 * 1024 * 1024 });
    expect(helpersOfThisTest()).toEqual([]);
  });
});
