import { chmod, lchown, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServeProcess } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NOBODY_UID, runCli, USERS } from './support/cli.js';
import { CHANNELS, SandboxShell } from './support/sandbox-shell.js';

/**
 * `connect(2)` to a pathname unix socket ignores read-only mounts (it needs write permission on the
 * socket file, which the sandbox's uid has), so a command that could create AF_UNIX sockets would
 * reach every host program listening on a socket its view shows: tmux, the session bus, docker.
 * Host listeners sit in a `--read-root` directory, in the workspace and elsewhere on disk (shown by
 * the read-only profile), plus an abstract one (reachable only with the host's network): through
 * `run`, `process/start` and a helper, as root and as nobody, none of them hears a byte, while a
 * program's own socketpair still works and the process carries a seccomp filter.
 */

let base: string;
let readDir: string;
let elsewhere: string;
const listeners: Array<{ path: string; server: Server; heard: string[] }> = [];

async function listen(path: string): Promise<{ path: string; heard: string[] }> {
  const heard: string[] = [];
  const server = createServer((socket) => {
    heard.push('connection');
    socket.on('data', (chunk) => heard.push(chunk.toString()));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  // Connectable by nobody too: only the sandbox may stand in the way.
  if (!path.startsWith('\0')) await chmod(path, 0o777);
  const listener = { path, server, heard };
  listeners.push(listener);
  return listener;
}

let inReadRoot: { path: string; heard: string[] };
let onDisk: { path: string; heard: string[] };
const abstractName = `fs-sandbox-unix-sockets-${process.pid}`;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-unix-sockets-');
  await chmod(base, 0o755);
  readDir = join(base, 'read-root');
  elsewhere = join(base, 'elsewhere');
  await mkdir(readDir);
  await mkdir(elsewhere);
  inReadRoot = await listen(join(readDir, 'tmux.sock'));
  onDisk = await listen(join(elsewhere, 'bus.sock'));
  // Heard nothing either: every listener is checked after each case.
  await listen(`\0${abstractName}`);
});

afterAll(async () => {
  for (const { server } of listeners) await new Promise((resolve) => server.close(resolve));
  await rm(base, { recursive: true, force: true });
});

/** Tries each target as a stream and a datagram socket, then a socketpair; prints one line per try. */
const PROBE = `
import socket, sys
for target in sys.argv[1:]:
    address = '\\0' + target[1:] if target.startswith('@') else target
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        try:
            s = socket.socket(socket.AF_UNIX, kind)
        except OSError as e:
            print('NO-SOCKET', target, e.errno)
            continue
        try:
            s.connect(address)
            s.sendall(b'pwned')
            print('CONNECTED', target)
        except OSError as e:
            print('REFUSED', target, e.errno)
a, b = socket.socketpair()
a.sendall(b'ok')
print('PAIR', b.recv(2).decode())
print('SECCOMP', open('/proc/self/status').read().split('Seccomp:')[1].split()[0])
`;

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const probe = (targets: string[]) =>
  `/usr/bin/python3 -c ${shellQuote(PROBE)} ${targets.map(shellQuote).join(' ')}`;

const entry = (path: string, access: string) => ({ path: { type: 'path', path: `file://${path}` }, access });
const minimal = { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' };
const root = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };

function context(ws: string, entries: unknown[], network: 'restricted' | 'enabled' = 'restricted'): unknown {
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network },
    cwd: `file://${ws}`,
    windowsSandboxLevel: 'disabled',
  };
}

function expectNothingReached(stdout: string, targets: string[]): void {
  for (const target of targets) expect(stdout).toContain(`NO-SOCKET ${target} 13`);
  expect(stdout).not.toContain('CONNECTED');
  expect(stdout).toContain('PAIR ok');
  expect(stdout).toContain('SECCOMP 2');
  for (const listener of listeners) expect(listener.heard).toEqual([]);
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let ws: string;
  let inWorkspace: { path: string; heard: string[] };
  let shell: SandboxShell;

  beforeAll(async () => {
    ws = join(base, `ws-${user}`);
    await mkdir(ws);
    inWorkspace = await listen(join(ws, 'dev-server.sock'));
    // A second name for a host socket, made by the agent inside its workspace.
    await symlink(onDisk.path, join(ws, 'link-to-bus.sock'));
    if (user === 'nobody') {
      await lchown(ws, NOBODY_UID, NOBODY_UID);
      await lchown(join(ws, 'link-to-bus.sock'), NOBODY_UID, NOBODY_UID);
    }
    shell = new SandboxShell(user, { PATH: '/usr/bin:/bin' });
  });

  afterAll(async () => {
    await shell.stop();
  });

  it('control: without a sandbox the same program reaches the workspace listener', async () => {
    const done = await runCli(['run', '--no-sandbox', '--', '/bin/sh', '-c', probe([inWorkspace.path])], {
      user,
      env: { PATH: '/usr/bin:/bin' },
      cwd: ws,
    });
    expect(done.stdout).toContain(`CONNECTED ${inWorkspace.path}`);
    expect(inWorkspace.heard).toEqual(['connection', 'pwned']);
    inWorkspace.heard.length = 0;
  });

  describe.each(CHANNELS)('through %s', (channel) => {
    it('reaches no socket in a read root or the workspace, by name, symlink or /proc/self/root', async () => {
      const targets = [
        inReadRoot.path,
        inWorkspace.path,
        join(ws, 'link-to-bus.sock'),
        `/proc/self/root${inWorkspace.path}`,
      ];
      const done = await shell.run(channel, probe(targets), {
        context: context(ws, [minimal, entry(readDir, 'read'), entry(ws, 'write')]),
        cwd: ws,
        scriptDir: ws,
      });
      expectNothingReached(done.stdout, targets);
    });

    it('reaches no socket anywhere on disk under the read-only profile', async () => {
      const targets = [inReadRoot.path, onDisk.path, inWorkspace.path];
      const done = await shell.run(channel, probe(targets), {
        context: context(ws, [root]),
        cwd: ws,
        scriptDir: ws,
      });
      expectNothingReached(done.stdout, targets);
    });

    it("reaches no abstract socket even with the host's network", async () => {
      const targets = [`@${abstractName}`];
      const done = await shell.run(channel, probe(targets), {
        context: context(ws, [minimal, entry(ws, 'write')], 'enabled'),
        cwd: ws,
        scriptDir: ws,
      });
      expectNothingReached(done.stdout, targets);
    });
  });
});

describe('the label', () => {
  it('process/start answers linuxSeccomp (its commands carry the filter: Seccomp 2 above)', async () => {
    const serve = ServeProcess.start([], { cwd: base });
    await serve.handshake();
    const reply = await serve.request('process/start', {
      processId: 'label',
      argv: ['/bin/true'],
      cwd: `file://${base}`,
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      sandbox: context(base, [minimal, entry(base, 'write')]),
    });
    expect(reply.result).toEqual({ processId: 'label', sandboxType: 'linuxSeccomp' });
    await serve.stop();
  });
});
