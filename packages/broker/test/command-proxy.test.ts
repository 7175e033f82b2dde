import { once } from 'node:events';
import { createServer as createHttpServer, request } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { LIMITS, type NetworkAllowlist, parseNetworkEntry } from '@fs-sandbox/policy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CommandProxy } from '../src/network/command-proxy.js';
import type { ProxyNetwork } from '../src/network/destination.js';
import type { NetworkEvent } from '../src/network/network-event.js';

/**
 * The proxy on its own, outside any sandbox: its listeners are plain loopback servers of the test,
 * and the machine it connects out to is a fake whose names resolve to public-looking addresses that
 * the fake connects to the test's loopback servers. So the names, addresses and connections the
 * proxy asks for are seen exactly, and nothing leaves this machine.
 */

const PUBLIC = '93.184.215.14';
const OTHER_PUBLIC = '93.184.215.15';

let echo: Server;
let web: Server;
let webRequests: Array<{ url: string; host: string | undefined }>;
const ports = { echo: 0, web: 0 };

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  web = createHttpServer((req, res) => {
    webRequests.push({ url: req.url ?? '', host: req.headers.host });
    res.end(`web saw ${req.method} ${req.url}`);
  });
  for (const [name, server] of [
    ['echo', echo],
    ['web', web],
  ] as const) {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    ports[name] = (server.address() as AddressInfo).port;
  }
});

afterAll(() => {
  echo.close();
  web.close();
});

interface Fake extends ProxyNetwork {
  lookups: string[];
  connects: string[];
}

/** Names resolve as `answers` says (each look-up takes the next answer); every address leads to 127.0.0.1. */
function fakeNetwork(answers: Record<string, string[][]>): Fake {
  const fake: Fake = {
    lookups: [],
    connects: [],
    async lookup(name) {
      fake.lookups.push(name);
      const queue = answers[name];
      const answer = queue?.shift();
      if (answer === undefined)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return answer;
    },
    hostAddresses: () => new Set(),
    connect(address, port) {
      fake.connects.push(`${address}:${port}`);
      return connect({ host: '127.0.0.1', port });
    },
  };
  return fake;
}

const allowlist = (allow: string[], deny: string[] = []): NetworkAllowlist => ({
  allow: allow.map((text) => parseNetworkEntry(text) as never),
  deny: deny.map((text) => parseNetworkEntry(text) as never),
});

let proxies: CommandProxy[] = [];
let listeners: Server[] = [];

afterEach(() => {
  for (const proxy of proxies) proxy.close();
  proxies = [];
  listeners = [];
});

async function startProxy(
  list: NetworkAllowlist,
  network: ProxyNetwork,
): Promise<{ http: number; socks: number; events: NetworkEvent[]; proxy: CommandProxy }> {
  const events: NetworkEvent[] = [];
  const proxy = new CommandProxy(list, { onEvent: (event) => events.push(event), network });
  proxies.push(proxy);
  const opened: number[] = [];
  for (const serve of [proxy.serveHttp.bind(proxy), proxy.serveSocks.bind(proxy)]) {
    const listener = createServer();
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    listeners.push(listener);
    serve(listener);
    opened.push((listener.address() as AddressInfo).port);
  }
  return { http: opened[0] as number, socks: opened[1] as number, events, proxy };
}

/** Sends `head` on a new connection and collects everything until the proxy closes it (or `until` matches). */
async function exchange(port: number, head: Buffer | string, until?: RegExp): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.write(head);
  let text = '';
  return new Promise((resolve) => {
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (until?.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
  });
}

async function eventually(events: NetworkEvent[], count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (events.length < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('HTTP CONNECT', () => {
  it('tunnels to an allowed name, connecting to exactly the address it judged', async () => {
    const fake = fakeNetwork({ 'echo.example': [[PUBLIC]] });
    const { http, events } = await startProxy(allowlist([`echo.example:${ports.echo}`]), fake);
    const text = await exchange(http, `CONNECT echo.example:${ports.echo} HTTP/1.1\r\n\r\nping`, /ping$/);
    expect(text).toBe('HTTP/1.1 200 Connection Established\r\n\r\nping');
    expect([fake.lookups, fake.connects]).toEqual([['echo.example'], [`${PUBLIC}:${ports.echo}`]]);
    await eventually(events, 1);
    expect(events[0]).toMatchObject({
      protocol: 'connect',
      host: 'echo.example',
      outcome: 'allowed',
      address: PUBLIC,
      bytesUp: 4,
      bytesDown: 4,
    });
  });

  it('refuses a name or port outside the allowlist with a 403 that says why, and connects nowhere', async () => {
    const fake = fakeNetwork({ 'echo.example': [[PUBLIC]] });
    const { http, events } = await startProxy(allowlist(['echo.example:443']), fake);
    const text = await exchange(http, `CONNECT echo.example:${ports.echo} HTTP/1.1\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(text).toContain('X-Proxy-Error: blocked-by-allowlist');
    expect(text).toContain(`fs-sandbox: echo.example:${ports.echo} is not in the network allowlist`);
    expect([fake.lookups, fake.connects]).toEqual([[], []]);
    expect(events).toMatchObject([{ outcome: 'refused', host: 'echo.example', port: ports.echo }]);
  });

  it('looks a name up once per connection: an answer that changes later (DNS rebinding) moves nothing', async () => {
    const fake = fakeNetwork({ 'rebind.example': [[PUBLIC], ['127.0.0.1']] });
    const { http } = await startProxy(allowlist(['rebind.example']), fake);
    await exchange(http, `CONNECT rebind.example:${ports.echo} HTTP/1.1\r\n\r\nx`, /x$/);
    expect(fake.connects).toEqual([`${PUBLIC}:${ports.echo}`]);
    const second = await exchange(http, `CONNECT rebind.example:${ports.echo} HTTP/1.1\r\n\r\n`);
    expect(second).toMatch(/403 Forbidden[\s\S]*resolves to 127\.0\.0\.1, a loopback address/);
    expect(fake.connects).toHaveLength(1);
  });

  it('refuses a name when any of its addresses is refused, whichever a client would try first', async () => {
    const fake = fakeNetwork({ 'mixed.example': [[PUBLIC, '169.254.169.254', OTHER_PUBLIC]] });
    const { http } = await startProxy(allowlist(['*']), fake);
    const text = await exchange(http, `CONNECT mixed.example:${ports.echo} HTTP/1.1\r\n\r\n`);
    expect(text).toMatch(/403[\s\S]*169\.254\.169\.254, a cloud metadata address/);
    expect(fake.connects).toEqual([]);
  });

  it('answers 502 with the reason when a name does not resolve or a connection fails', async () => {
    const fake = fakeNetwork({});
    const { http, events } = await startProxy(allowlist(['*']), fake);
    const text = await exchange(http, 'CONNECT nowhere.example:443 HTTP/1.1\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 502 Bad Gateway[\s\S]*cannot resolve nowhere\.example: .*ENOTFOUND/);
    expect(events).toMatchObject([{ outcome: 'failed' }]);
  });

  it('refuses a request target that is not host:port', async () => {
    const { http } = await startProxy(allowlist(['*']), fakeNetwork({}));
    for (const target of ['echo.example', 'a@echo.example:80', '[::1%lo]:80', 'echo.example:0']) {
      expect(await exchange(http, `CONNECT ${target} HTTP/1.1\r\n\r\n`), target).toMatch(/^HTTP\/1\.1 400 /);
    }
  });
});

describe('plain HTTP through the proxy', () => {
  it('forwards an absolute-form request, with Host set from the request line whatever the client sent', async () => {
    webRequests = [];
    const fake = fakeNetwork({ 'web.example': [[PUBLIC]] });
    const { http, events } = await startProxy(allowlist([`web.example:${ports.web}`]), fake);
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: http,
          path: `http://web.example:${ports.web}/a?b=1`,
          headers: { Host: 'evil.example' },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve(`${res.statusCode} ${body}`));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer).toBe('200 web saw GET /a?b=1');
    expect(webRequests).toEqual([{ url: '/a?b=1', host: `web.example:${ports.web}` }]);
    await eventually(events, 1);
    expect(events[0]).toMatchObject({
      protocol: 'http',
      outcome: 'allowed',
      host: 'web.example',
      address: PUBLIC,
    });
  });

  it('refuses origin-form requests, https:// URLs and names outside the allowlist, each with a reason', async () => {
    const { http } = await startProxy(allowlist(['web.example']), fakeNetwork({}));
    expect(await exchange(http, 'GET / HTTP/1.1\r\nHost: web.example\r\n\r\n')).toMatch(
      /^HTTP\/1\.1 400 [\s\S]*this is a proxy/,
    );
    expect(await exchange(http, 'GET https://web.example/ HTTP/1.1\r\nHost: web.example\r\n\r\n')).toMatch(
      /400[\s\S]*goes through CONNECT/,
    );
    expect(await exchange(http, 'GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n')).toMatch(
      /403[\s\S]*other\.example:80 is not in the network allowlist/,
    );
    expect(await exchange(http, 'GET http://user@web.example/ HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('SOCKS5', () => {
  const greeting = Buffer.from([5, 1, 0]);
  const domainRequest = (name: string, port: number) =>
    Buffer.concat([
      Buffer.from([5, 1, 0, 3, name.length]),
      Buffer.from(name),
      Buffer.from([port >> 8, port & 0xff]),
    ]);
  const ipv4Request = (bytes: number[], port: number) =>
    Buffer.from([5, 1, 0, 1, ...bytes, port >> 8, port & 0xff]);

  it('connects a domain request the proxy resolved and judged', async () => {
    const fake = fakeNetwork({ 'echo.example': [[PUBLIC]] });
    const { socks } = await startProxy(allowlist(['echo.example']), fake);
    const text = await exchange(
      socks,
      Buffer.concat([greeting, domainRequest('echo.example', ports.echo), Buffer.from('pong')]),
      /pong$/,
    );
    expect(Buffer.from(text, 'latin1').subarray(0, 4)).toEqual(Buffer.from([5, 0, 5, 0]));
    expect(fake.connects).toEqual([`${PUBLIC}:${ports.echo}`]);
  });

  it('refuses an IP literal to loopback (code 2) and says a name that does not resolve is unreachable (code 4)', async () => {
    const { socks, events } = await startProxy(allowlist(['*']), fakeNetwork({}));
    const loopback = Buffer.from(
      await exchange(socks, Buffer.concat([greeting, ipv4Request([127, 0, 0, 1], ports.echo)])),
      'latin1',
    );
    expect([...loopback.subarray(2, 4)]).toEqual([5, 2]);
    const missing = Buffer.from(
      await exchange(socks, Buffer.concat([greeting, domainRequest('nowhere.example', 80)])),
      'latin1',
    );
    expect([...missing.subarray(2, 4)]).toEqual([5, 4]);
    expect(events.map((event) => event.outcome)).toEqual(['refused', 'failed']);
    expect(events[0]?.reason).toMatch(/127\.0\.0\.1:\d+, a loopback address/);
  });
});

describe('bounds and lifetime', () => {
  it(`refuses connections past ${LIMITS.networkMaxConnections} open at once, and says so`, async () => {
    const { http, events } = await startProxy(allowlist(['*']), fakeNetwork({}));
    const open: Socket[] = [];
    for (let index = 0; index < LIMITS.networkMaxConnections; index++) {
      const socket = connect({ host: '127.0.0.1', port: http });
      socket.on('error', () => {});
      open.push(socket);
      await once(socket, 'connect');
    }
    const extra = connect({ host: '127.0.0.1', port: http });
    extra.on('error', () => {});
    await once(extra, 'close');
    await eventually(events, 1);
    expect(events).toMatchObject([
      { outcome: 'refused', reason: `more than ${LIMITS.networkMaxConnections} connections open at once` },
    ]);
    for (const socket of open) socket.destroy();
  });

  it('ends every tunnel when the command ends', async () => {
    const fake = fakeNetwork({ 'echo.example': [[PUBLIC]] });
    const { http, proxy } = await startProxy(allowlist(['echo.example']), fake);
    const socket = connect({ host: '127.0.0.1', port: http });
    await once(socket, 'connect');
    socket.write(`CONNECT echo.example:${ports.echo} HTTP/1.1\r\n\r\n`);
    await once(socket, 'data');
    proxy.close();
    await once(socket, 'close');
  });
});
