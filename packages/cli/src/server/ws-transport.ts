import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { ReplyPump } from './reply-pump.js';
import type { ReplyOutput, RpcConnection } from './rpc-connection.js';

export interface WebSocketListenOptions {
  host: string;
  port: number;
  maxMessageBytes: number;
  /** Checks the handshake's Origin; the upgrade is refused with 403 unless it passes. */
  acceptOrigin(headers: IncomingHttpHeaders): boolean;
  /** Checks the `Authorization` header; the upgrade is refused with 401 unless it passes. */
  authorize(header: string | undefined): boolean;
  /** False when the server is at its connection limit; the upgrade is refused with 503. */
  canAccept(): boolean;
  onRefused(): void;
  open(output: ReplyOutput): RpcConnection;
  closed(connection: RpcConnection): void;
}

export interface WebSocketListener {
  url: string;
  close(): Promise<void>;
}

/** Replies waiting in the socket beyond this pause reading from that client until they drain. */
const OUTGOING_HIGH_WATER_BYTES = 16 * 1024 * 1024;

function refuse(socket: Duplex, status: number, reason: string, extraHeaders = ''): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n${extraHeaders}\r\n`);
  socket.destroy();
}

/**
 * JSON-RPC over WebSocket text frames. The Origin check and authentication happen on the HTTP
 * upgrade, before any message is read: a browser page cannot set an Authorization header on a
 * WebSocket, and a handshake from a page always names the page's origin, so neither a cross-site
 * page nor one that learnt the token talks to a loopback server unless its origin is allowed. Messages larger than the limit
 * make ws close the connection with 1009 (message too big) before they are buffered.
 */
export async function listenWebSocket(options: WebSocketListenOptions): Promise<WebSocketListener> {
  // Loaded here, not at the top: every `fs-sandbox call` loads this module, and only `serve --listen ws://` needs ws.
  const { WebSocketServer } = await import('ws');
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxMessageBytes,
    perMessageDeflate: false,
  });
  const http = createServer((_request, response) => {
    response.writeHead(426, { Connection: 'close', 'Content-Length': '0' });
    response.end();
  });
  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (!options.acceptOrigin(request.headers)) {
      options.onRefused();
      refuse(socket, 403, 'Forbidden');
      return;
    }
    if (!options.authorize(request.headers.authorization)) {
      options.onRefused();
      refuse(socket, 401, 'Unauthorized', 'WWW-Authenticate: Bearer\r\n');
      return;
    }
    if (!options.canAccept()) {
      options.onRefused();
      refuse(socket, 503, 'Service Unavailable');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => attach(ws, options));
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `ws://${host}:${address.port}`,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function attach(ws: WebSocket, options: WebSocketListenOptions): void {
  let outgoing = 0;
  let wakeWriter: (() => void) | null = null;
  const wake = () => {
    const waiting = wakeWriter;
    wakeWriter = null;
    waiting?.();
  };
  const pump = new ReplyPump({
    write(part, last) {
      outgoing += part.length;
      // A large reply goes out as fragments of one text message (continuation frames), so it never
      // has to exist as one buffer.
      ws.send(part, { binary: false, fin: last }, () => {
        outgoing -= part.length;
        if (outgoing < OUTGOING_HIGH_WATER_BYTES) wake();
      });
      return outgoing < OUTGOING_HIGH_WATER_BYTES;
    },
    async waitForRoom() {
      // Reading from this client pauses until its replies drain.
      ws.pause();
      await new Promise<void>((room) => {
        wakeWriter = room;
      });
      if (ws.readyState === ws.OPEN) ws.resume();
    },
    get closed() {
      return ws.readyState !== ws.OPEN;
    },
  });
  const connection = options.open(pump);
  ws.on('message', (data) => connection.receive(data as Buffer));
  // ws reports protocol violations and oversized messages here and then closes; the close
  // handler does the clean-up, so the error itself needs no more than being handled.
  ws.on('error', () => undefined);
  ws.on('close', () => {
    wake();
    void connection.close();
    options.closed(connection);
  });
}
