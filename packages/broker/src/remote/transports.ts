import { type ChildProcess, spawn } from 'node:child_process';
import { LIMITS } from '@fs-sandbox/policy';
import WebSocket from 'ws';
import { LineSplitter } from './line-splitter.js';
import type { MessageTransport } from './rpc-client.js';

/**
 * Replies can be much larger than requests (a 512 MiB fs/readFile is about 683 MiB of base64): the
 * client accepts what the helper's reply bound allows, and no more, so a peer cannot make it buffer
 * without limit.
 */
export const MAX_REPLY_BYTES = LIMITS.helperMaxReplyBytes;

/** The exec-server's WebSocket framing: one JSON-RPC message per text frame, bearer token on connect. */
export function webSocketTransport(url: string, token: string | undefined): MessageTransport {
  const socket = new WebSocket(url, {
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    maxPayload: MAX_REPLY_BYTES,
  });
  const opened = new Promise<void>((resolve) => socket.once('open', () => resolve()));
  return {
    send(message) {
      // Messages sent before the socket opened wait for it; a socket that never opens ends the
      // connection (its 'close' reports why) and rejects them there.
      void opened.then(() => socket.send(message));
    },
    start(handlers) {
      // The first cause reported is the one the caller sees (terminating a refused socket reports
      // a second, vaguer one).
      let why: string | undefined;
      socket.on('message', (data: Buffer) => handlers.message(data.toString('utf8')));
      socket.on('unexpected-response', (_request, response) => {
        why ??= `the server refused the connection (HTTP ${response.statusCode})`;
        socket.terminate();
      });
      socket.on('error', (error) => {
        why ??= error.message;
      });
      socket.on('close', () => handlers.closed(why ?? 'the server closed the connection'));
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close();
      });
    },
  };
}

/** What `spawnBroker` starts: a program speaking the exec-server protocol on its stdio. */
export interface StdioCommand {
  file: string;
  args?: readonly string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** Newline-delimited JSON on a child's stdin/stdout; its exit ends the connection. */
export function stdioTransport(command: StdioCommand): MessageTransport {
  const child: ChildProcess = spawn(command.file, [...(command.args ?? [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
    ...(command.env === undefined ? {} : { env: command.env }),
    ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // EPIPE after the server died: its exit reports the loss.
  child.stdin?.on('error', () => undefined);
  return {
    send(message) {
      child.stdin?.write(`${message}\n`);
    },
    start(handlers) {
      let why = 'the server exited';
      const splitter = new LineSplitter(MAX_REPLY_BYTES, {
        line: (bytes) => handlers.message(bytes.toString('utf8')),
        oversized: (bytes) => {
          why = `it sent a message of ${bytes} bytes, over the client's limit of ${MAX_REPLY_BYTES}`;
          child.kill('SIGKILL');
        },
      });
      child.stdout?.on('data', (chunk: Buffer) => splitter.push(chunk));
      child.on('error', (error) => {
        why = `it could not be started: ${error.message}`;
      });
      child.once('close', (code, signal) => {
        if (why === 'the server exited') why = `the server exited (${signal ?? `status ${code}`})`;
        handlers.closed(why);
      });
    },
    pause: () => child.stdout?.pause(),
    resume: () => child.stdout?.resume(),
    async close() {
      child.stdin?.end();
      await exited;
    },
  };
}
