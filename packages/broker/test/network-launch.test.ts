import { once } from 'node:events';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NetworkAllowlist, parseNetworkEntry } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandLaunchSpec } from '../src/backends/backend.js';
import { commandNetworkLaunch } from '../src/network/command-network-launch.js';
import type { NetworkEvent } from '../src/network/network-event.js';
import { type NetworkLaunch, networkLauncherArgv } from '../src/network/sandbox-listeners.js';
import { CommandProcess } from '../src/runner/command-process.js';

/**
 * The set-up step and the broker's side of it, without bwrap (the e2e suite runs them sandboxed):
 * the step's shell and node hand their listening socket over the channel, the command then runs
 * with exactly its environment and argv and without the channel, and the proxy serves what the
 * step handed over. Here the listener is in the test's own network namespace, on a free port.
 */

const SHELL = realpathSync('/bin/sh');
const NODE = realpathSync(process.execPath);

let web: Server;
let webPort: number;

beforeAll(async () => {
  web = createHttpServer((req, res) => res.end(`web saw ${req.url}`));
  web.listen(0, '127.0.0.1');
  await once(web, 'listening');
  webPort = (web.address() as AddressInfo).port;
});

afterAll(() => web.close());

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

const allowWeb = (): NetworkAllowlist => ({
  allow: [parseNetworkEntry(`127.0.0.1:${webPort}`) as never],
  deny: [],
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  events: NetworkEvent[];
}

async function runLaunch(network: NetworkLaunch, env: Record<string, string>, argv: string[]): Promise<Ran> {
  const launch: CommandLaunchSpec = {
    backend: null,
    sandboxProgram: null,
    sandboxArgs: [],
    argv: networkLauncherArgv(SHELL, NODE, network, env, argv),
    env: {},
    cwd: '/',
    network,
  };
  const out = { stdout: '', stderr: '' };
  const events: NetworkEvent[] = [];
  let exited: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    exited = resolve;
  });
  await CommandProcess.start(launch, 'ignore', {
    output: (stream, chunk) => {
      out[stream] += chunk.toString();
    },
    exit: (code) => exited(code),
    closed: () => {},
    network: (event) => events.push(event),
  });
  return { code: await done, ...out, events };
}

describe('the network set-up step', () => {
  it('hands over its listener, then runs the command with exactly its environment and argv, without the channel', async () => {
    const port = await freePort();
    const network: NetworkLaunch = {
      channelFd: 3,
      listeners: [{ port, use: 'http-proxy' }],
      allowlist: allowWeb(),
    };
    const env = { PATH: '/usr/bin:/bin', ODD: 'a b "$HOME" `x` $(y)', EMPTY: '', LINES: 'one\ntwo' };
    // The environment exactly (env itself, not a shell, which would add PWD).
    const printed = await runLaunch(network, env, ['/usr/bin/env', '-0']);
    expect(printed.code).toBe(0);
    expect(printed.stdout.split('\0').filter(Boolean).sort()).toEqual([
      'EMPTY=',
      'LINES=one\ntwo',
      'ODD=a b "$HOME" `x` $(y)',
      'PATH=/usr/bin:/bin',
    ]);
    const second = await freePort();
    const script = [
      'printf "<%s>" "$@"; echo',
      'if [ -e /proc/$$/fd/3 ]; then echo "3 open"; else echo "3 closed"; fi',
      `curl -sS -m 10 -x http://127.0.0.1:${second} http://127.0.0.1:${webPort}/via-proxy`,
    ].join('\n');
    const ran = await runLaunch({ ...network, listeners: [{ port: second, use: 'http-proxy' }] }, env, [
      '/bin/sh',
      '-c',
      script,
      'sh',
      'one two',
      '$HOME',
      '--',
      '',
    ]);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const [args, fds, answer] = ran.stdout.split('\n');
    expect(args).toBe('<one two><$HOME><--><>');
    // The channel was descriptor 3; it was closed before the exec.
    expect(fds).toBe('3 closed');
    expect(answer).toBe('web saw /via-proxy');
    expect(ran.events).toMatchObject([{ protocol: 'http', outcome: 'allowed', port: webPort }]);
  });

  it('refuses the start with what the step said when it cannot listen, and the command never runs', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as AddressInfo).port;
    try {
      const network: NetworkLaunch = { channelFd: 3, listeners: [{ port, use: 'forward' }], allowlist: null };
      await expect(runLaunch(network, {}, ['/bin/sh', '-c', 'echo the command ran'])).rejects.toMatchObject({
        kind: 'sandbox_unavailable',
        message: expect.stringMatching(
          new RegExp(
            `network set-up inside the sandbox ended \\(exit 125\\).*cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`,
          ),
        ),
      });
    } finally {
      taken.close();
    }
  });

  it('refuses names that are not variable names, and a channel the shell cannot name', () => {
    const network: NetworkLaunch = { channelFd: 3, listeners: [], allowlist: null };
    expect(() => networkLauncherArgv(SHELL, NODE, network, { 'A;rm -rf /': 'x' }, ['true'])).toThrow(
      /bad environment name/,
    );
    expect(() => networkLauncherArgv(SHELL, NODE, { ...network, channelFd: 12 }, {}, ['true'])).toThrow(
      /descriptor 3\.\.9/,
    );
  });
});

describe('unix socket relays in the launch', () => {
  const programs = { shell: SHELL, node: NODE };
  it('listen on the first free ports from 9500 beside the other listeners, named in FS_SANDBOX_UNIX_SOCKETS', () => {
    const relays = [
      { path: '/run/a.sock', target: '/srv/a.sock' },
      { path: '/run/b.sock', target: '/srv/b.sock' },
    ];
    const plan = commandNetworkLaunch(
      { network: { kind: 'managed', loopbackPorts: [9500, 3128] }, env: { A: '1' }, argv: ['true'] },
      programs,
      relays,
    );
    expect(plan?.launch.listeners).toEqual([
      { port: 9500, use: 'forward' },
      { port: 3128, use: 'forward' },
      { port: 9501, use: 'unix-relay', target: '/srv/a.sock' },
      { port: 9502, use: 'unix-relay', target: '/srv/b.sock' },
    ]);
    expect(plan?.launch.allowlist).toBeNull();
    expect(JSON.parse(plan?.env.FS_SANDBOX_UNIX_SOCKETS as string)).toEqual({
      '/run/a.sock': '127.0.0.1:9501',
      '/run/b.sock': '127.0.0.1:9502',
    });
    // No network and no socket: no set-up step at all.
    expect(commandNetworkLaunch({ network: { kind: 'none' }, env: {}, argv: ['true'] }, programs)).toBeNull();
    expect(
      commandNetworkLaunch({ network: { kind: 'none' }, env: {}, argv: ['true'] }, programs, relays)?.launch
        .listeners,
    ).toHaveLength(2);
  });

  it('relays a connection to the socket, bytes both ways, and reports it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-sandbox-relay-'));
    const path = join(dir, 'echo.sock');
    const echo = createServer((socket) => socket.on('data', (chunk) => socket.end(`echo:${chunk}`)));
    echo.listen(path);
    await once(echo, 'listening');
    try {
      const port = await freePort();
      const ran = await runLaunch(
        { channelFd: 3, listeners: [{ port, use: 'unix-relay', target: path }], allowlist: null },
        {},
        [
          NODE,
          '-e',
          `const s=require('net').connect(${port},'127.0.0.1',()=>s.write('hi'));s.on('data',d=>process.stdout.write(d));`,
        ],
      );
      expect(ran.stdout).toBe('echo:hi');
      expect(ran.events).toMatchObject([
        {
          protocol: 'unix',
          host: path,
          port: null,
          address: path,
          outcome: 'allowed',
          bytesUp: 2,
          bytesDown: 7,
        },
      ]);
    } finally {
      echo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
