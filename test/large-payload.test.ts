import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { sandboxContext, uri } from './support/pool.js';

/**
 * fs/readFile at its limit (512 MiB) through the sandbox and the real server. Its base64 (~716 Mi
 * characters) is longer than any V8 string, so the server must stream it and the client here
 * decodes it as it arrives, hashing the bytes, never holding the text. The server's peak resident
 * memory is reported: one copy of the file (the broker keeps the helper's bytes as a Buffer) plus
 * a few MiB of encoded slices.
 */

const SIZE = LIMITS.readFileMaxBytes;
const BLOCK = 4 * 1024 * 1024;
let dir: string;
let file: string;
let expectedSha256: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp('/tmp/fs-sandbox-large-');
  mkdirSync(join(dir, 'data'));
  file = join(dir, 'data', 'big.bin');
  // Distinct bytes in every block (a counter), so a dropped, repeated or reordered slice shows.
  const hash = createHash('sha256');
  const block = Buffer.alloc(BLOCK);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
  const fd = openSync(file, 'w');
  try {
    for (let offset = 0; offset < SIZE; offset += BLOCK) {
      block.writeUInt32LE(offset / BLOCK, 0);
      writeSync(fd, block);
      hash.update(block);
    }
  } finally {
    closeSync(fd);
  }
  expectedSha256 = hash.digest('hex');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Reads newline-framed replies; a reply that starts with `bigPrefix` is decoded and hashed on the fly. */
class StreamingClient {
  private text = '';
  private big: { hash: ReturnType<typeof createHash>; carry: string; bytes: number } | null = null;
  /** After the closing quote of the big string, the rest of its reply line (it may span chunks). */
  private tail: string | null = null;
  private readonly lines: string[] = [];
  private waiting: (() => void) | null = null;
  bigResult: { sha256: string; bytes: number; suffix: string } | null = null;

  constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly bigPrefix: string,
  ) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.take(chunk.toString('latin1'));
      this.waiting?.();
    });
    child.once('exit', () => this.waiting?.());
  }

  send(message: unknown): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async next(): Promise<string> {
    while (this.lines.length === 0) {
      if (this.child.exitCode !== null) throw new Error('the server exited');
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
    return this.lines.shift() as string;
  }

  private take(chunk: string): void {
    if (this.big !== null) {
      this.decode(chunk);
      return;
    }
    if (this.tail !== null) {
      this.finishBigLine(chunk);
      return;
    }
    this.text += chunk;
    if (this.text.startsWith(this.bigPrefix)) {
      const rest = this.text.slice(this.bigPrefix.length);
      this.text = '';
      this.big = { hash: createHash('sha256'), carry: '', bytes: 0 };
      this.decode(rest);
      return;
    }
    for (let newline = this.text.indexOf('\n'); newline !== -1; newline = this.text.indexOf('\n')) {
      this.lines.push(this.text.slice(0, newline));
      this.text = this.text.slice(newline + 1);
    }
  }

  private decode(chunk: string): void {
    const big = this.big as NonNullable<typeof this.big>;
    const quote = chunk.indexOf('"');
    const base64 = big.carry + (quote === -1 ? chunk : chunk.slice(0, quote));
    const whole = base64.length - (base64.length % 4);
    const bytes = Buffer.from(base64.slice(0, whole), 'base64');
    big.hash.update(bytes);
    big.bytes += bytes.length;
    big.carry = base64.slice(whole);
    if (quote === -1) return;
    this.bigResult = { sha256: big.hash.digest('hex'), bytes: big.bytes, suffix: '' };
    this.big = null;
    this.tail = '';
    this.finishBigLine(chunk.slice(quote + 1));
  }

  private finishBigLine(chunk: string): void {
    const line = (this.tail as string) + chunk;
    const newline = line.indexOf('\n');
    if (newline === -1) {
      this.tail = line;
      return;
    }
    this.tail = null;
    (this.bigResult as NonNullable<typeof this.bigResult>).suffix = line.slice(0, newline);
    this.lines.push('<big reply>');
    this.take(line.slice(newline + 1));
  }
}

function peakResidentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return Number(match?.[1]) * 1024;
}

describe('fs/readFile of 512 MiB through the sandbox and the server', () => {
  it('returns exactly the file, streamed, with the server holding about one copy of it', async () => {
    const child = spawn(process.execPath, [CLI_BIN, 'serve', '--listen', 'stdio', '--pool-size', '0'], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const client = new StreamingClient(child, '{"id":2,"result":{"dataBase64":"');
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const started = performance.now();
    try {
      client.send({ id: 1, method: 'initialize', params: { clientName: 'large' } });
      client.send({ method: 'initialized' });
      expect(JSON.parse(await client.next()).result.sessionId).toBeTypeOf('string');
      const sandbox = sandboxContext({ read: [join(dir, 'data')] });
      client.send({ id: 2, method: 'fs/readFile', params: { path: uri(file), sandbox } });
      expect(await client.next()).toBe('<big reply>');
      const seconds = (performance.now() - started) / 1000;
      const peak = peakResidentBytes(child.pid as number);
      expect(client.bigResult).toEqual({ sha256: expectedSha256, bytes: SIZE, suffix: '}}' });
      // One copy of the data, plus node and a few encoded slices.
      expect(peak).toBeLessThan(SIZE + 256 * 1024 * 1024);
      console.log(
        `512 MiB sandboxed fs/readFile through the server: ${seconds.toFixed(1)} s, server peak RSS ${(peak / 1024 / 1024).toFixed(0)} MiB`,
      );
      // The connection still works after the big reply.
      client.send({ id: 3, method: 'fs/getMetadata', params: { path: uri(file), sandbox } });
      expect(JSON.parse(await client.next()).result).toMatchObject({ isFile: true, size: SIZE });
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
    expect(stderr).toBe('');
  });

  it('refuses one byte more than the limit, naming the limit', async () => {
    const child = spawn(process.execPath, [CLI_BIN, 'serve', '--listen', 'stdio', '--pool-size', '0'], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const client = new StreamingClient(child, '\u0000never');
    try {
      const over = openSync(file, 'a');
      writeSync(over, Buffer.from([1]));
      closeSync(over);
      client.send({ id: 1, method: 'initialize', params: { clientName: 'large' } });
      client.send({ method: 'initialized' });
      await client.next();
      const sandbox = sandboxContext({ read: [join(dir, 'data')] });
      client.send({ id: 2, method: 'fs/readFile', params: { path: uri(file), sandbox } });
      const reply = JSON.parse(await client.next());
      expect(reply.error.data.errorKind).toBe('file_too_large');
      expect(reply.error.message).toContain('fs/readFile reads at most 536870912 bytes (512 MiB)');
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});

/** `fs-sandbox serve --listen stdio` with the pool off, spoken to through a StreamingClient. */
async function startServer(): Promise<StreamingClient> {
  const child = spawn(process.execPath, [CLI_BIN, 'serve', '--listen', 'stdio', '--pool-size', '0'], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const client = new StreamingClient(child, '\u0000no big reply expected');
  client.send({ id: 1, method: 'initialize', params: { clientName: 'large' } });
  client.send({ method: 'initialized' });
  await client.next();
  return client;
}

async function stopServer(client: StreamingClient): Promise<void> {
  client.child.stdin.end();
  if (client.child.exitCode === null) await new Promise((resolve) => client.child.once('exit', resolve));
}

/**
 * Writes travel as base64 inside one JSON-RPC message, so the server's message limit (LIMITS.
 * rpcMaxMessageBytes, 64 MiB, `serve --max-message-bytes`) bounds them: about 48 MiB of data. Up to
 * it a sandboxed write works; past it the message is refused whole, with the limit in the error.
 */
describe('fs/writeFile near the message limit through the sandbox and the server', () => {
  const MiB = 1024 * 1024;

  it('writes 44 MiB (about 59 MiB of base64) and the file on disk is exactly those bytes', async () => {
    const client = await startServer();
    try {
      const data = Buffer.alloc(44 * MiB);
      for (let i = 0; i < data.length; i += 4) data.writeUInt32LE(i, i);
      const target = join(dir, 'data', 'written.bin');
      const sandbox = sandboxContext({ write: [join(dir, 'data')] });
      const message = {
        id: 2,
        method: 'fs/writeFile',
        params: { path: uri(target), dataBase64: data.toString('base64'), sandbox },
      };
      expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(LIMITS.rpcMaxMessageBytes);
      client.send(message);
      expect(JSON.parse(await client.next())).toEqual({ id: 2, result: {} });
      expect(statSync(target).size).toBe(data.length);
      expect(createHash('sha256').update(readFileSync(target)).digest('hex')).toBe(
        createHash('sha256').update(data).digest('hex'),
      );
    } finally {
      await stopServer(client);
    }
  });

  it('refuses a larger write cleanly, naming the limit, and keeps serving', async () => {
    const client = await startServer();
    try {
      const target = join(dir, 'data', 'too-big.bin');
      const sandbox = sandboxContext({ write: [join(dir, 'data')] });
      const dataBase64 = Buffer.alloc(50 * MiB, 1).toString('base64');
      client.send({ id: 2, method: 'fs/writeFile', params: { path: uri(target), dataBase64, sandbox } });
      const reply = JSON.parse(await client.next());
      expect(reply.id).toBe(-1);
      expect(reply.error.data.errorKind).toBe('invalid_request');
      expect(reply.error.message).toMatch(
        new RegExp(`^JSON-RPC message of \\d+ bytes exceeds the limit of ${LIMITS.rpcMaxMessageBytes} bytes`),
      );
      expect(() => statSync(target)).toThrow();
      client.send({ id: 3, method: 'fs/getMetadata', params: { path: uri(join(dir, 'data')), sandbox } });
      expect(JSON.parse(await client.next()).result).toMatchObject({ isDirectory: true });
    } finally {
      await stopServer(client);
    }
  });
});
