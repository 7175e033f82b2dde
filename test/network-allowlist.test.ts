import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import { type AddressInfo, isIPv4 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { REPO } from './support/build.js';
import { type CliUser, runCli, USERS } from './support/cli.js';
import { sandboxContext, uri } from './support/pool.js';
import { processFinished } from './support/process-output.js';

/**
 * A command's network under an allowlist, through the real CLI, server and bwrap, with local servers
 * only: what the allowlist names is reached through the broker's proxy (HTTP, HTTPS end to end with
 * a test CA, SOCKS5, curl, git, node), everything else is refused with a reason the client and the
 * audit log see, and nothing gets out around the proxy (raw TCP, UDP, IPv6, the host's loopback and
 * own addresses, metadata addresses, every spelling of them).
 */

let base: string;
let ws: string;
let caDir: string;
let web: Server;
let secure: Server;
let git: Server;
const ports = { web: 0, secure: 0, git: 0 };
/** A non-loopback address of this host, where `web` listens too (null where it has none). */
const hostAddress =
  Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && !entry.internal && isIPv4(entry.address))?.address ?? null;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-net-');
  ws = join(base, 'ws');
  caDir = join(base, 'ca');
  await mkdir(ws);
  await mkdir(caDir);
  await makeTestCa(caDir);
  await writeProbes(ws);
  for (const dir of [base, ws, caDir]) await chmod(dir, 0o755);

  web = createHttpServer((req, res) => res.end(`web: ${req.method} ${req.url} host=${req.headers.host}\n`));
  web.listen(0, '0.0.0.0');
  secure = createHttpsServer(
    { key: readFileSync(join(caDir, 'server.key')), cert: readFileSync(join(caDir, 'server.pem')) },
    (req, res) => res.end(`secure: ${req.url}\n`),
  );
  secure.listen(0, '127.0.0.1');
  const repo = await makeBareRepo(join(base, 'served'));
  git = createHttpServer((req, res) => {
    // A dumb-HTTP git server: the bare repository's files as they are.
    const path = normalize(
      join(
        repo,
        decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/repo\.git/, ''),
      ),
    );
    if (!path.startsWith(repo) || !existsSync(path)) {
      res.writeHead(404).end();
      return;
    }
    createReadStream(path)
      .on('error', () => res.destroy())
      .pipe(res);
  });
  git.listen(0, '127.0.0.1');
  for (const [name, server] of [
    ['web', web],
    ['secure', secure],
    ['git', git],
  ] as const) {
    if (!server.listening) await once(server, 'listening');
    ports[name] = (server.address() as AddressInfo).port;
  }
});

afterAll(async () => {
  for (const server of [web, secure, git]) server?.close();
  await rm(base, { recursive: true, force: true });
});

const CA_ENV = () => ({
  CURL_CA_BUNDLE: join(caDir, 'ca.pem'),
  NODE_EXTRA_CA_CERTS: join(caDir, 'ca.pem'),
  GIT_SSL_CAINFO: join(caDir, 'ca.pem'),
});
const baseEnv = { PATH: '/usr/bin:/bin' };

function run(user: CliUser, args: string[], env: Record<string, string> = baseEnv) {
  return runCli(['run', '--cwd', ws, ...args], { user, env, timeoutMs: 60_000 });
}

async function makeTestCa(dir: string): Promise<void> {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=fs-sandbox test CA',
  );
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  await writeFile(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
  for (const file of ['ca.pem', 'ca.key']) await chmod(join(dir, file), 0o644);
}

async function makeBareRepo(dir: string): Promise<string> {
  const gitEnv = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: base,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  const work = join(dir, 'work');
  const bare = join(dir, 'repo.git');
  await mkdir(work, { recursive: true });
  const inWork = (...args: string[]) => execFileSync('git', args, { cwd: work, env: gitEnv, stdio: 'pipe' });
  inWork('init', '-q', '-b', 'main');
  await writeFile(join(work, 'README'), 'served over dumb http\n');
  inWork('add', 'README');
  inWork('commit', '-q', '-m', 'first');
  execFileSync('git', ['clone', '-q', '--bare', work, bare], { env: gitEnv, stdio: 'pipe' });
  execFileSync('git', ['update-server-info'], { cwd: bare, env: gitEnv, stdio: 'pipe' });
  return bare;
}

/** Scripts the commands run (node is in the sandbox's minimal reads). */
async function writeProbes(dir: string): Promise<void> {
  // Every way out that does not go through the proxy, and what the kernel answered.
  await writeFile(
    join(dir, 'bypass.cjs'),
    `const net = require('net'), dgram = require('dgram'), fs = require('fs');
const [port, hostAddress] = process.argv.slice(2);
const tcp = (host, p) => new Promise((done) => {
  const socket = net.connect({ host, port: Number(p) });
  socket.setTimeout(3000, () => { socket.destroy(); done('ETIMEDOUT'); });
  socket.on('connect', () => { socket.destroy(); done('connected'); });
  socket.on('error', (error) => done(error.code));
});
const udp = (host, p) => new Promise((done) => {
  const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  socket.on('error', (error) => done(error.code));
  socket.send('x', Number(p), host, (error) => { socket.close(); done(error ? error.code : 'sent'); });
});
(async () => console.log(JSON.stringify({
  loopback: await tcp('127.0.0.1', port),
  ipv6Loopback: await tcp('::1', port),
  hostAddress: hostAddress === 'none' ? 'ENETUNREACH' : await tcp(hostAddress, port),
  publicV4: await tcp('93.184.215.14', 80),
  publicV6: await tcp('2606:4700::1111', 80),
  udp4: await udp('93.184.215.14', 53),
  udp6: await udp('2606:4700::1111', 53),
  interfaces: fs.readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean),
})))();
`,
  );
  // Raw requests to the proxies, spelled as an attacker would; prints each whole answer as a JSON string.
  await writeFile(
    join(dir, 'raw.cjs'),
    `const net = require('net');
const [port, kind, ...rest] = process.argv.slice(2);
const payload = kind === 'http' ? rest.join(' ').replace(/\\\\r\\\\n/g, '\\r\\n') : Buffer.from(rest.join(' '), 'hex');
const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => socket.write(payload));
let got = Buffer.alloc(0);
socket.on('data', (chunk) => { got = Buffer.concat([got, chunk]); });
socket.setTimeout(5000, () => socket.destroy());
socket.on('close', () => console.log(JSON.stringify(kind === 'http' ? got.toString('latin1') : got.toString('hex'))));
socket.on('error', () => {});
`,
  );
}

/** What raw.cjs printed: one whole answer per request. */
const answersOf = (stdout: string): string[] =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string);
const statusLine = (answer: string): string => answer.split('\r\n')[0] as string;

const bypassed = (user: CliUser, extra: string[]) =>
  run(user, [...extra, '--', 'node', 'bypass.cjs', String(ports.web), hostAddress ?? 'none']);

describe.each(USERS)('a command behind the allowlist, as %s', (user) => {
  it('reaches an allowed HOST:PORT over HTTP through the proxy, and is refused another port or name, with the reason', async () => {
    const allowed = await run(user, [
      '--allow-domain',
      `127.0.0.1:${ports.web}`,
      '--',
      'sh',
      '-c',
      `curl -sS -f http://127.0.0.1:${ports.web}/hello; curl -sS -x socks5h://127.0.0.1:1080 http://127.0.0.1:${ports.web}/socks`,
    ]);
    expect(allowed.stderr).toBe('');
    expect(allowed.stdout).toBe(
      `web: GET /hello host=127.0.0.1:${ports.web}\nweb: GET /socks host=127.0.0.1:${ports.web}\n`,
    );
    expect(allowed.code).toBe(0);

    const refused = await run(user, [
      '--allow-domain',
      `127.0.0.1:${ports.web}`,
      '--',
      'sh',
      '-c',
      `curl -sS -f http://127.0.0.1:${ports.secure}/; echo "port: $?"; curl -sS https://registry.example/; echo "name: $?"`,
    ]);
    expect(refused.stdout).toBe('port: 22\nname: 56\n');
    // curl says what the proxy answered; `run` adds why.
    expect(refused.stderr).toContain(
      `fs-sandbox: network: 127.0.0.1:${ports.secure} is not in the network allowlist`,
    );
    expect(refused.stderr).toContain(
      'fs-sandbox: network: registry.example:443 is not in the network allowlist',
    );
    expect(refused.stderr).toContain('CONNECT tunnel failed, response 403');
  });

  it('speaks HTTPS end to end with the host CA variables (passed through, the CA file bound alone)', async () => {
    const env = { ...baseEnv, ...CA_ENV() };
    const done = await run(
      user,
      [
        '--allow-domain',
        `localhost:${ports.secure}`,
        '--',
        'sh',
        '-c',
        [
          `curl -sS -f https://localhost:${ports.secure}/curl`,
          `cat ${join(caDir, 'ca.pem')} | head -1`,
          `cat ${join(caDir, 'ca.key')} 2>/dev/null || echo "no key"`,
        ].join('; '),
      ],
      env,
    );
    expect(done.stderr).toBe('');
    expect(done.stdout).toBe('secure: /curl\n-----BEGIN CERTIFICATE-----\nno key\n');
    // Without the CA variables the same server's certificate is not trusted: nothing intercepts TLS.
    const untrusted = await run(user, [
      '--allow-domain',
      `localhost:${ports.secure}`,
      '--',
      'curl',
      '-sS',
      `https://localhost:${ports.secure}/`,
    ]);
    expect(untrusted.code).toBe(60);
  });

  it('gets nothing out around the proxy: raw TCP, UDP, IPv6, the loopback and own addresses all fail', async () => {
    const done = await bypassed(user, ['--allow-domain', '*']);
    expect(done.code).toBe(0);
    const answers = JSON.parse(done.stdout) as Record<string, unknown>;
    expect(answers).toMatchObject({
      hostAddress: 'ENETUNREACH',
      publicV4: 'ENETUNREACH',
      publicV6: 'ENETUNREACH',
      udp4: 'ENETUNREACH',
      udp6: 'ENETUNREACH',
      interfaces: ['lo'],
    });
    // The namespace's own loopback: nothing of the host's listens there.
    expect(answers.loopback).toBe('ECONNREFUSED');
    expect(['ECONNREFUSED', 'EADDRNOTAVAIL', 'ENETUNREACH']).toContain(answers.ipv6Loopback);
  });
});

describe('what no allowlist entry but an exact one reaches (red team)', () => {
  const raw = (user: CliUser, allow: string[], ...requests: string[][]) =>
    run(user, [
      ...allow.flatMap((entry) => ['--allow-domain', entry]),
      '--',
      'sh',
      '-c',
      requests.map((args) => `node raw.cjs ${args.map((arg) => `'${arg}'`).join(' ')}`).join('; '),
    ]);
  const connect = (target: string) => [
    '3128',
    'http',
    `CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n`,
  ];
  const socks = (hex: string) => ['1080', 'socks', `050100${hex}`];
  const portHex = () => ports.web.toString(16).padStart(4, '0');

  it.each(USERS)(
    'refuses every spelling of loopback, the host, link-local and metadata, by CONNECT and SOCKS5 (%s)',
    async (user) => {
      const p = ports.web;
      const targets = [
        `127.0.0.1:${p}`,
        `localhost:${p}`,
        `2130706433:${p}`,
        `0x7f.1:${p}`,
        `0177.0.0.1:${p}`,
        `127.1:${p}`,
        `[::ffff:127.0.0.1]:${p}`,
        `[::1]:${p}`,
        `[::]:${p}`,
        `0.0.0.0:${p}`,
        '169.254.169.254:80',
        '[fd00:ec2::254]:80',
        ...(hostAddress === null ? [] : [`${hostAddress}:${p}`]),
      ];
      const done = await raw(
        user,
        ['*'],
        ...targets.map(connect),
        ['3128', 'http', `GET http://127.0.0.1:${p}/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n`],
        socks(`05010001 7f000001 ${portHex()}`.replaceAll(' ', '')),
        socks(`050100030009${Buffer.from('localhost').toString('hex')}${portHex()}`),
        socks(`05010004${'0'.repeat(31)}1${portHex()}`),
        socks(`05020001 7f000001 ${portHex()}`.replaceAll(' ', '')),
      );
      const answers = answersOf(done.stdout);
      expect(answers.slice(0, targets.length + 1).map(statusLine)).toEqual(
        new Array(targets.length + 1).fill('HTTP/1.1 403 Forbidden'),
      );
      // SOCKS5: method accepted (0500), then 05 02 "not allowed by ruleset" for each, 05 07 for BIND.
      expect(answers.slice(targets.length + 1).map((answer) => answer.slice(0, 8))).toEqual([
        '05000502',
        '05000502',
        '05000502',
        '05000507',
      ]);
      expect(done.stderr).toMatch(/a loopback address: only an entry naming that address and port/);
      expect(done.stderr).toMatch(/169\.254\.169\.254:80, a cloud metadata address/);
      if (hostAddress !== null)
        expect(done.stderr).toContain(`${hostAddress}:${p}, one of this host's own addresses`);
    },
  );

  it('reaches a local address only through an entry naming it with its port; a Host header cannot redirect', async () => {
    const p = ports.web;
    const done = await raw(
      'root',
      [`127.0.0.1:${p}`, 'localhost'],
      [
        '3128',
        'http',
        `GET http://127.0.0.1:${p}/smuggle HTTP/1.1\\r\\nHost: evil.example\\r\\nConnection: close\\r\\n\\r\\n`,
      ],
      connect(`localhost:${p}`),
      [
        '3128',
        'http',
        `GET http://127.0.0.1:${p}/a HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 3\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n`,
      ],
    );
    const answers = answersOf(done.stdout);
    // The request line decides where a request goes, and the Host it arrives with says so.
    expect(statusLine(answers[0] as string)).toBe('HTTP/1.1 200 OK');
    expect(answers[0]).toContain(`web: GET /smuggle host=127.0.0.1:${p}\n`);
    // `localhost` without a port leads to no loopback port.
    expect(statusLine(answers[1] as string)).toBe('HTTP/1.1 403 Forbidden');
    // Content-Length beside Transfer-Encoding: refused, never forwarded for the server to read its way.
    expect(statusLine(answers[2] as string)).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('the audit log and process/start', () => {
  it("records allowed and refused connections, and routes a client's managed network to its loopback ports", async () => {
    const audit = join(base, 'audit.jsonl');
    const serve = ServeProcess.start(['--audit-log', audit], { env: { ...process.env, ...baseEnv } });
    await serve.handshake();
    const context = sandboxContext({ read: ['/usr', '/bin', '/lib', '/lib64', '/etc'], write: [ws] }) as {
      permissions: Record<string, unknown>;
    };
    context.permissions.network_domains = { allow: [`127.0.0.1:${ports.web}`], deny: [] };
    const start = (processId: string, argv: string[], extra: Record<string, unknown> = {}) =>
      serve.request('process/start', {
        processId,
        argv,
        cwd: uri(ws),
        env: { PATH: '/usr/bin:/bin' },
        tty: false,
        sandbox: context,
        ...extra,
      });
    const from = serve.rawLines.length;
    const started = await start('curl', [
      'sh',
      '-c',
      `curl -sS http://127.0.0.1:${ports.web}/audited; curl -sS http://127.0.0.1:${ports.secure}/refused`,
    ]);
    expect(started.result).toEqual({ processId: 'curl', sandboxType: 'linuxSeccomp' });
    const done = await processFinished(serve, 'curl', from);
    expect(done.stdout).toContain('web: GET /audited');
    expect(done.stdout).toContain(`fs-sandbox: 127.0.0.1:${ports.secure} is not in the network allowlist`);

    // enforceManagedNetwork: the client's own proxy (here: web) on the host's loopback, and nothing else.
    const { network_domains: _, ...withoutDomains } = context.permissions;
    const managedFrom = serve.rawLines.length;
    await start(
      'managed',
      [
        'sh',
        '-c',
        `curl -sS http://127.0.0.1:${ports.web}/managed; curl -sS -m 5 http://127.0.0.1:${ports.secure}/ || echo "other: $?"`,
      ],
      {
        sandbox: { ...context, permissions: withoutDomains },
        enforceManagedNetwork: true,
        managedNetwork: { loopbackPorts: [ports.web], allowLocalBinding: false },
      },
    );
    const managed = await processFinished(serve, 'managed', managedFrom);
    expect(managed.stdout).toBe(`web: GET /managed host=127.0.0.1:${ports.web}\nother: 7\n`);
    const refused = await start('none', ['true'], {
      enforceManagedNetwork: true,
      sandbox: { ...context, permissions: withoutDomains },
    });
    expect(refused.error?.data.errorKind).toBe('sandbox_unavailable');
    expect(refused.error?.message).toMatch(/needs the ports of the client's proxy/);
    await serve.stop();

    const lines = (await readFile(audit, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.method === 'network');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          processId: 'curl',
          protocol: 'http',
          host: '127.0.0.1',
          port: ports.web,
          outcome: 'ok',
          address: '127.0.0.1',
        }),
        expect.objectContaining({
          processId: 'curl',
          protocol: 'http',
          port: ports.secure,
          outcome: 'denied',
          reason: `127.0.0.1:${ports.secure} is not in the network allowlist`,
        }),
        expect.objectContaining({
          processId: 'managed',
          protocol: 'forward',
          port: ports.web,
          outcome: 'ok',
        }),
      ]),
    );
  });
});

describe('clients behind the allowlist, and --network', () => {
  it('git clones over HTTP through the proxy', async () => {
    const done = await run('root', [
      '--allow-domain',
      `127.0.0.1:${ports.git}`,
      '--env',
      `HOME=${ws}`,
      '--',
      'sh',
      '-c',
      `git clone -q http://127.0.0.1:${ports.git}/repo.git cloned && cat cloned/README`,
    ]);
    // Nothing went wrong on the way; the clone's new .git is removed at exit, and said (the
    // executable surface: a command leaves no repository where the policy allows none).
    expect(done.stderr).toBe(
      `fs-sandbox: removed ${join(ws, 'cloned', '.git')}, which the command made: protected metadata path .git (git runs a repository's config and hooks on the host, and a gitfile names another git directory); a command may leave a new git repository only where the policy allows one (allow_nested_repositories)\n`,
    );
    expect(done.stdout).toBe('served over dumb http\n');
  });

  it("node's fetch goes through the proxy over HTTPS (Node 20 needs undici's EnvHttpProxyAgent; newer ones honour NODE_USE_ENV_PROXY, which run sets)", async () => {
    const undici = dirname(createRequire(join(REPO, 'test', 'package.json')).resolve('undici/package.json'));
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    const honoursEnv = major >= 24 || (major === 22 && minor >= 21);
    const fetched = `fetch('https://localhost:${ports.secure}/fetch').then((r) => r.text()).then(console.log)`;
    const script = honoursEnv
      ? fetched
      : `const u = require('${undici}'); u.setGlobalDispatcher(new u.EnvHttpProxyAgent()); ${fetched}`;
    const done = await run(
      'root',
      [
        '--allow-domain',
        `localhost:${ports.secure}`,
        '--read-root',
        undici,
        // undici's EnvHttpProxyAgent says it is experimental on every use.
        '--env',
        'NODE_NO_WARNINGS=1',
        '--',
        'node',
        '-e',
        script,
      ],
      { ...baseEnv, ...CA_ENV() },
    );
    expect(done.stderr).toBe('');
    expect(done.stdout).toBe('secure: /fetch\n\n');
  });

  it('--network gives the host network as before; the flags refuse what they cannot mean', async () => {
    // The host's own loopback is reachable only from the host's network namespace (a command of
    // its own namespace has a loopback of its own): so on every machine, with or without an
    // address beside loopback, and as both users.
    for (const user of USERS) {
      const loopback = await run(user, [
        '--network',
        '--',
        'curl',
        '-sS',
        `http://127.0.0.1:${ports.web}/host-loopback`,
      ]);
      expect([user, loopback.stdout]).toEqual([
        user,
        `web: GET /host-loopback host=127.0.0.1:${ports.web}\n`,
      ]);
      const isolated = await run(user, ['--', 'curl', '-sS', `http://127.0.0.1:${ports.web}/isolated`]);
      expect([user, isolated.code, isolated.stdout]).toEqual([user, 7, '']);
    }
    if (hostAddress !== null) {
      const direct = await run('root', [
        '--network',
        '--',
        'curl',
        '-sS',
        `http://${hostAddress}:${ports.web}/direct`,
      ]);
      expect(direct.stdout).toBe(`web: GET /direct host=${hostAddress}:${ports.web}\n`);
    }
    const both = await run('root', ['--network', '--allow-domain', 'a.example', '--', 'true']);
    expect([both.code, both.stderr]).toEqual([
      125,
      expect.stringMatching(/use one or the other \[invalid_params\]/),
    ]);
    const bad = await run('root', ['--allow-domain', 'a b.example', '--', 'true']);
    expect(bad.stderr).toMatch(
      /network entry `a b\.example`: `a b\.example` is not a host name or IP address/,
    );
    const bare = await run('root', ['--no-sandbox', '--allow-domain', 'a.example', '--', 'true']);
    expect(bare.stderr).toMatch(/--allow-domain needs a sandbox/);
  });
});
