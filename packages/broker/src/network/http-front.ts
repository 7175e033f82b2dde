import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  type CanonicalHost,
  canonicalHost,
  destinationText,
  LIMITS,
  parseAuthority,
} from '@fs-sandbox/policy';
import { type NetworkEvent, networkEvent } from './network-event.js';
import type { ProxyCore } from './proxy-core.js';

/**
 * The HTTP proxy of a command: node's own parser (bounded headers, no request smuggling through
 * conflicting lengths) fed the connections the proxy accepted, answering
 *
 * - `CONNECT host:port`: a tunnel to the judged address; the bytes inside (TLS, usually) are
 *   relayed as they are, never read;
 * - a request in absolute form (`GET http://host:port/path`): judged per request and forwarded on
 *   a connection of its own, with `Host` set from the request line (so a Host naming another site
 *   cannot ride on a connection judged for this one) and the hop-by-hop headers dropped.
 *
 * Everything else (origin-form requests, `https://` URLs, Upgrade, what the parser refuses) gets a
 * status and a one-line reason; refusals of the allowlist are 403 with `X-Proxy-Error:
 * blocked-by-allowlist`, failures to reach an allowed destination 502.
 */
export function httpFront(core: ProxyCore): (socket: Socket) => void {
  const server = createServer({ maxHeaderSize: 16 * 1024 });
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    onConnect(core, req, socket, head).catch((error) => core.broken(socket, error));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    onRequest(core, req, res).catch((error) => core.broken(req.socket, error));
  });
  server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
    const reason = 'an Upgrade through a plain proxy request is not relayed; use CONNECT';
    refuse(core, socket, 501, networkEvent('http', Date.now(), { reason }));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const reason = `not an HTTP request this proxy reads (${error.code ?? error.message})`;
    refuse(core, socket, 400, networkEvent('http', Date.now(), { reason }));
  });
  return (socket) => server.emit('connection', socket);
}

/** Headers that describe one hop of HTTP, not the request: never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const STATUS_TEXT = {
  400: 'Bad Request',
  403: 'Forbidden',
  501: 'Not Implemented',
  502: 'Bad Gateway',
} as const;
type ProxyStatus = keyof typeof STATUS_TEXT;

async function onConnect(core: ProxyCore, req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
  const started = Date.now();
  socket.pause();
  const target = parseAuthority(req.url ?? '');
  if (target === null) {
    const reason = `CONNECT needs host:port, not ${JSON.stringify((req.url ?? '').slice(0, 300))}`;
    refuse(core, socket, 400, networkEvent('connect', started, { reason }));
    return;
  }
  const opened = await core.open(target.host, target.port);
  if (opened.kind !== 'connected') {
    const event = judgedEvent('connect', started, target.host, target.port, opened);
    refuse(core, socket, opened.kind === 'refused' ? 403 : 502, event);
    return;
  }
  if (socket.destroyed) {
    opened.socket.destroy();
    return;
  }
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  // What the client sent right after its request belongs to the tunnel already.
  const tunnel = {
    protocol: 'connect',
    host: target.host,
    port: target.port,
    address: opened.address,
    started,
  } as const;
  core.relay(tunnel, socket, opened.socket, head);
}

async function onRequest(core: ProxyCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = Date.now();
  const url = absoluteUrl(req.url ?? '');
  if (url === null || url.protocol !== 'http:' || url.username !== '' || url.password !== '') {
    const reason =
      url?.protocol === 'https:'
        ? 'an https:// URL goes through CONNECT (the proxy never makes TLS connections for a client)'
        : 'this is a proxy: send http://host/path in the request line, or CONNECT host:port';
    answer(core, res, 400, networkEvent('http', started, { reason }));
    return;
  }
  const host = canonicalHost(url.hostname);
  const port = url.port === '' ? 80 : Number(url.port);
  if (host === null) {
    const reason = `${url.hostname} is not a host name or IP address`;
    answer(core, res, 400, networkEvent('http', started, { port, reason }));
    return;
  }
  const opened = await core.open(host, port);
  if (opened.kind !== 'connected') {
    answer(
      core,
      res,
      opened.kind === 'refused' ? 403 : 502,
      judgedEvent('http', started, host, port, opened),
    );
    return;
  }
  const upstream = opened.socket;
  core.track(upstream);
  const traffic = core.traffic(req, upstream);
  req.socket.setTimeout(LIMITS.networkIdleTimeoutMs);
  upstream.setTimeout(LIMITS.networkIdleTimeoutMs, () => upstream.destroy());
  const forwarded = request({
    createConnection: () => upstream,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers: [...endToEndHeaders(req.rawHeaders, ['host']), 'Host', url.host, 'Connection', 'close'],
    setHost: false,
  });
  let ended = false;
  const finish = (reason: string | null) => {
    if (ended) return;
    ended = true;
    upstream.destroy();
    core.report(
      networkEvent('http', started, {
        host: host.name,
        port,
        address: opened.address,
        outcome: reason === null ? 'allowed' : 'failed',
        reason,
        bytesUp: traffic.up,
        bytesDown: traffic.down,
      }),
    );
  };
  forwarded.on('response', (reply) => {
    res.writeHead(reply.statusCode ?? 502, reply.statusMessage, endToEndHeaders(reply.rawHeaders, []));
    reply.pipe(res);
    reply.on('error', () => res.destroy());
  });
  forwarded.on('error', (error) => {
    const reason = `${destinationText(host, port)} failed: ${error.message}`;
    if (!res.headersSent) writeAnswer(res, 502, reason);
    else res.destroy();
    finish(reason);
  });
  res.on('close', () =>
    finish(res.writableFinished ? null : 'the connection closed before the answer was complete'),
  );
  req.pipe(forwarded);
}

function absoluteUrl(target: string): URL | null {
  try {
    return new URL(target);
  } catch {
    // origin-form (`GET / HTTP/1.1`): a client that took the proxy for the server itself.
    return null;
  }
}

function judgedEvent(
  protocol: NetworkEvent['protocol'],
  started: number,
  host: CanonicalHost,
  port: number,
  opened: { kind: 'refused' | 'failed'; reason: string; address: string | null },
): NetworkEvent {
  return networkEvent(protocol, started, {
    host: host.name,
    port,
    address: opened.address,
    outcome: opened.kind,
    reason: opened.reason,
  });
}

/** A refusal on a raw socket (CONNECT, or a request the parser would not read), then closed. */
function refuse(core: ProxyCore, socket: Duplex, status: ProxyStatus, event: NetworkEvent): void {
  const body = `fs-sandbox: ${event.reason}\n`;
  if (socket.writable)
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
        `X-Proxy-Error: ${proxyError(status)}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  else socket.destroy();
  core.report({ ...event, outcome: status === 502 ? 'failed' : 'refused' });
}

/** A refusal of one plain request. */
function answer(core: ProxyCore, res: ServerResponse, status: ProxyStatus, event: NetworkEvent): void {
  writeAnswer(res, status, event.reason ?? STATUS_TEXT[status]);
  core.report({ ...event, outcome: status === 502 ? 'failed' : 'refused' });
}

function writeAnswer(res: ServerResponse, status: ProxyStatus, reason: string): void {
  const body = `fs-sandbox: ${reason}\n`;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Proxy-Error': proxyError(status),
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

function proxyError(status: ProxyStatus): string {
  return status === 403 ? 'blocked-by-allowlist' : 'proxy-error';
}

/**
 * Raw headers without the hop-by-hop ones, those the `Connection` header names, and `drop` (lower
 * case): what passes from one side of the proxy to the other.
 */
function endToEndHeaders(raw: readonly string[], drop: readonly string[]): string[] {
  const named = new Set<string>(drop);
  for (let index = 0; index + 1 < raw.length; index += 2) {
    if ((raw[index] as string).toLowerCase() === 'connection')
      for (const token of (raw[index + 1] as string).split(',')) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] as string).toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) kept.push(raw[index] as string, raw[index + 1] as string);
  }
  return kept;
}
