import { chmod, lchown, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NOBODY_UID, runCli, USERS } from './support/cli.js';
import { SandboxShell } from './support/sandbox-shell.js';

/**
 * `run --allow-unix-socket PATH` (the context's `unix_sockets`): the named host socket is
 * reachable from a command, through the broker's relay on a 127.0.0.1 port of the command's own
 * network (FS_SANDBOX_UNIX_SOCKETS), and no other socket is — one in a `--read-root` directory, one
 * in the workspace, one elsewhere on disk under `--profile read-only` — while the command still
 * cannot create an AF_UNIX socket, its socketpair works and it carries the seccomp filter. A named
 * socket the command could re-point (inside a writable root, or through a link there) is refused
 * before anything runs. Through `run` and process/start, as root and as nobody.
 */

let base: string;
let readDir: string;
let elsewhere: string;
const servers: Server[] = [];

interface Listener {
  path: string;
  heard: string[];
}

/** A host program on a unix socket: it records what it hears and answers `pong:` and the bytes. */
async function listen(path: string): Promise<Listener> {
  const heard: string[] = [];
  const server = createServer((socket) => {
    heard.push('connection');
    socket.on('data', (chunk) => {
      heard.push(chunk.toString());
      socket.end(`pong:${chunk.toString()}`);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  await chmod(path, 0o777);
  servers.push(server);
  return { path, heard };
}

let named: Listener;
let inReadRoot: Listener;
let onDisk: Listener;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-unix-relay-');
  await chmod(base, 0o755);
  readDir = join(base, 'read-root');
  elsewhere = join(base, 'elsewhere');
  await mkdir(readDir);
  await mkdir(elsewhere);
  await chmod(elsewhere, 0o755);
  named = await listen(join(elsewhere, 'docker.sock'));
  inReadRoot = await listen(join(readDir, 'tmux.sock'));
  onDisk = await listen(join(elsewhere, 'bus.sock'));
});

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await rm(base, { recursive: true, force: true });
});

/**
 * Tries every target as an AF_UNIX stream socket, then each relay address the variable names over
 * TCP (sending `ping`), then a socketpair; prints one line per try.
 */
const PROBE = `
import json, os, socket, sys
for target in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as e:
        print('NO-SOCKET', target, e.errno)
        continue
    try:
        s.connect(target)
        s.sendall(b'pwned')
        print('CONNECTED', target)
    except OSError as e:
        print('REFUSED', target, e.errno)
relays = json.loads(os.environ.get('FS_SANDBOX_UNIX_SOCKETS', '{}'))
for path, address in sorted(relays.items()):
    host, port = address.rsplit(':', 1)
    c = socket.create_connection((host, int(port)), timeout=20)
    c.sendall(b'ping')
    answer = b''
    while True:
        chunk = c.recv(100)
        if not chunk:
            break
        answer += chunk
    print('RELAY', path, answer.decode())
a, b = socket.socketpair()
a.sendall(b'ok')
print('PAIR', b.recv(2).decode())
print('SECCOMP', open('/proc/self/status').read().split('Seccomp:')[1].split()[0])
`;

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const probe = (targets: string[]) =>
  `/usr/bin/python3 -c ${shellQuote(PROBE)} ${targets.map(shellQuote).join(' ')}`;

const env = { PATH: '/usr/bin:/bin' };

function expectOnlyNamed(stdout: string, others: Listener[], workspace: Listener): void {
  for (const target of [named, ...others, workspace]) expect(stdout).toContain(`NO-SOCKET ${target.path} 13`);
  expect(stdout).not.toContain('CONNECTED');
  expect(stdout).toContain(`RELAY ${named.path} pong:ping`);
  expect(stdout).toContain('PAIR ok');
  expect(stdout).toContain('SECCOMP 2');
  expect(named.heard).toEqual(['connection', 'ping']);
  for (const other of [...others, workspace]) expect(other.heard).toEqual([]);
  named.heard.length = 0;
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let ws: string;
  let inWorkspace: Listener;

  beforeAll(async () => {
    ws = join(base, `ws-${user}`);
    await mkdir(ws);
    inWorkspace = await listen(join(ws, 'dev-server.sock'));
    await symlink(named.path, join(ws, 'link-to-docker.sock'));
    if (user === 'nobody') {
      await lchown(ws, NOBODY_UID, NOBODY_UID);
      await lchown(join(ws, 'link-to-docker.sock'), NOBODY_UID, NOBODY_UID);
    }
  });

  const run = (flags: string[], targets: string[]) =>
    runCli(['run', ...flags, '--', '/bin/sh', '-c', probe(targets)], {
      user,
      env,
      cwd: ws,
      timeoutMs: 60_000,
    });

  it('run --allow-unix-socket: the named socket through its relay, no socket in a read root or the workspace', async () => {
    const done = await run(
      ['--read-root', readDir, '--allow-unix-socket', named.path],
      [named.path, inReadRoot.path, inWorkspace.path],
    );
    expect(done.code, done.stderr).toBe(0);
    expectOnlyNamed(done.stdout, [inReadRoot], inWorkspace);
  });

  it('run --profile read-only --allow-unix-socket: the whole disk is readable, one socket reachable', async () => {
    const done = await run(
      ['--profile', 'read-only', '--allow-unix-socket', named.path],
      [named.path, inReadRoot.path, onDisk.path, inWorkspace.path],
    );
    expect(done.code, done.stderr).toBe(0);
    expectOnlyNamed(done.stdout, [inReadRoot, onDisk], inWorkspace);
  });

  it('run --policy FILE whose profile names unix_sockets: the same', async () => {
    const policy = join(ws, 'fs-sandbox.toml');
    await writeFile(
      policy,
      `[profiles.relay]\nread_roots = ["${readDir}"]\nunix_sockets = ["${named.path}"]\n`,
    );
    const done = await run(
      ['--policy', policy, '--profile', 'relay'],
      [named.path, inReadRoot.path, inWorkspace.path],
    );
    expect(done.code, done.stderr).toBe(0);
    expectOnlyNamed(done.stdout, [inReadRoot], inWorkspace);
  });

  it('refuses a named socket the command could re-point: in the workspace, or through a link there', async () => {
    for (const path of [inWorkspace.path, join(ws, 'link-to-docker.sock')]) {
      const done = await run(['--allow-unix-socket', path], []);
      expect(done.code).toBe(125);
      expect(done.stderr).toContain('inside the writable root');
    }
    const missing = await run(['--allow-unix-socket', join(elsewhere, 'missing.sock')], []);
    expect(missing.code).toBe(125);
    expect(missing.stderr).toContain('cannot be relayed');
    const both = await run(['--network', '--allow-unix-socket', named.path], []);
    expect(both.code).toBe(125);
    expect(both.stderr).toContain('--allow-unix-socket');
    for (const listener of [named, inWorkspace]) expect(listener.heard).toEqual([]);
  });

  it('process/start with unix_sockets in the context: the same', async () => {
    const shell = new SandboxShell(user, env);
    try {
      const entries = [
        { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
        { path: { type: 'path', path: `file://${readDir}` }, access: 'read' },
        { path: { type: 'path', path: `file://${ws}` }, access: 'write' },
      ];
      const context = {
        permissions: {
          type: 'managed',
          file_system: { type: 'restricted', entries },
          network: 'restricted',
          unix_sockets: [`file://${named.path}`],
        },
        cwd: `file://${ws}`,
        windowsSandboxLevel: 'disabled',
      };
      const done = await shell.run('process/start', probe([named.path, inReadRoot.path, inWorkspace.path]), {
        context,
        cwd: ws,
        scriptDir: ws,
      });
      expect(done.code, done.stderr).toBe(0);
      expectOnlyNamed(done.stdout, [inReadRoot], inWorkspace);
    } finally {
      await shell.stop();
    }
  });
});
