import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { type NetworkAllowlist, parseNetworkEntry } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandLaunchSpec } from '../src/backends/backend.js';
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
