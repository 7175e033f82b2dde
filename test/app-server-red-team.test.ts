import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIMITS } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt } from './fixtures/conformance/serve-process.js';
import { type AppMessage, AppServerClient } from './support/app-server-client.js';
import { type CliUser, NOBODY_UID } from './support/cli.js';
import { snapshotTree } from './support/tree-snapshot.js';

/**
 * Attacks on `fs-sandbox app-server` that its own design invites, each tried with a variant, as
 * root and as nobody, with the host checked afterwards: a watched directory swapped for a symlink
 * to outside, a watch on a path that only appears later (possibly as such a symlink), watches
 * through /proc, a flood of changes under a watch, another connection's process ids, and
 * command/exec policies that try to widen the server's. The server runs with
 * `--cwd work --deny work/secret` unless a case says otherwise.
 */

let dir: string;
let work: string;
let outside: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-app-server-red-team-'));
  await chmod(dir, 0o755);
  work = join(dir, 'work');
  outside = join(dir, 'outside');
  await mkdir(join(work, 'secret'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(work, 'secret', 'key.txt'), 'top secret\n');
  await writeFile(join(outside, 'o.txt'), 'outside\n');
  await writeFile(join(outside, 'f.txt'), 'outside f\n');
  await chmod(work, 0o777);
  await chmod(outside, 0o777);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function userPrefix(user: CliUser): string[] {
  return user === 'root'
    ? []
    : ['setpriv', `--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups'];
}

function start(user: CliUser, extra: string[] = []): AppServerClient {
  return AppServerClient.ours(['--cwd', work, '--deny', join(work, 'secret'), ...extra], {
    cwd: work,
    prefix: userPrefix(user),
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every path named by the fs/changed notifications among `messages`. */
function changedPaths(messages: AppMessage[]): string[] {
  return messages
    .filter((m) => m.method === 'fs/changed')
    .flatMap((m) => (m.params?.changedPaths ?? []) as string[]);
}

/** Waits until a change naming `path` arrives, then a little longer; returns every path named. */
async function changesUntil(peer: AppServerClient, path: string): Promise<string[]> {
  const seen = await peer.notificationsUntil(
    (m) => m.method === 'fs/changed' && ((m.params?.changedPaths ?? []) as string[]).includes(path),
  );
  await pause(400);
  return changedPaths([...seen, ...peer.notifications.splice(0)]);
}

async function exec(peer: AppServerClient, script: string, extra: Record<string, unknown> = {}) {
  const reply = await peer.request('command/exec', { command: ['sh', '-c', script], ...extra });
  return reply;
}

describe.each(['root', 'nobody'] as const)('app-server red team, as %s', (user) => {
  let peer: AppServerClient;

  beforeAll(async () => {
    peer = start(user);
    await peer.initialize();
  });

  afterAll(async () => {
    await peer.stop();
  });

  it('a watched directory swapped for a symlink to outside never reports outside changes', async () => {
    const watched = join(work, `swap-${user}`);
    const moved = join(work, `moved-${user}`);
    await mkdir(watched);
    await writeFile(join(watched, 'f.txt'), 'f\n');
    expect((await peer.request('fs/watch', { watchId: 'dir', path: watched })).result).toEqual({
      path: watched,
    });
    // The file watch holds the same directory: the variant that names one entry.
    expect(
      (await peer.request('fs/watch', { watchId: 'file', path: join(watched, 'f.txt') })).result,
    ).toEqual({
      path: join(watched, 'f.txt'),
    });
    await pause(300);
    await rename(watched, moved);
    await symlink(outside, watched);
    await writeFile(join(outside, 'leak.txt'), 'not to be named\n');
    await writeFile(join(outside, 'f.txt'), 'changed outside\n');
    await writeFile(join(moved, 'control.txt'), 'named\n');
    await writeFile(join(moved, 'f.txt'), 'changed in the watched directory\n');
    const named = await changesUntil(peer, join(watched, 'control.txt'));
    expect(named).not.toContain(join(watched, 'leak.txt'));
    // f.txt is named for the change of the watched directory's own f.txt, which did change.
    expect(named).toContain(join(watched, 'f.txt'));
    // Moved into the denied directory, the watched directory reports nothing at all.
    await rename(moved, join(work, 'secret', `moved-${user}`));
    await pause(300);
    peer.notifications.splice(0);
    await writeFile(join(work, 'secret', `moved-${user}`, 'hidden.txt'), 'secret\n');
    await pause(700);
    expect(changedPaths(peer.notifications.splice(0))).toEqual([]);
    await peer.request('fs/unwatch', { watchId: 'dir' });
    await peer.request('fs/unwatch', { watchId: 'file' });
    // A watch on the swapped name now, or on any symlink to outside, is refused.
    for (const path of [watched, join(watched, 'o.txt')]) {
      const refused = await peer.request('fs/watch', { watchId: 'again', path });
      expect(refused.error, path).toMatchObject({ code: -32600, data: { errorKind: 'permission_denied' } });
    }
  });

  it('a watch on a path whose directories appear later enters only directories the policy shows', async () => {
    const base = join(work, `later-${user}`);
    const target = join(base, 'a', 'b', 'file.txt');
    expect((await peer.request('fs/watch', { watchId: 'later', path: target })).result).toEqual({
      path: target,
    });
    // First `a` appears as a symlink to outside, where a/b/file.txt exists and changes.
    await mkdir(join(outside, 'a', 'b'), { recursive: true });
    await mkdir(base);
    await symlink(join(outside, 'a'), join(base, 'a'));
    await writeFile(join(outside, 'a', 'b', 'file.txt'), 'outside\n');
    await pause(700);
    expect(changedPaths(peer.notifications.splice(0))).toEqual([]);
    // Then as a real directory: the watch goes down and names the file once it exists.
    await rm(join(base, 'a'));
    await mkdir(join(base, 'a', 'b'), { recursive: true });
    await writeFile(target, 'inside\n');
    expect([...new Set(await changesUntil(peer, target))]).toEqual([target]);
    await peer.request('fs/unwatch', { watchId: 'later' });
    // A missing path below the denied directory is refused outright.
    const denied = await peer.request('fs/watch', {
      watchId: 'denied',
      path: join(work, 'secret', 'new', 'x'),
    });
    expect(denied.error).toMatchObject({ code: -32600 });
  });

  it('a flood of changes stays within the bounds while other requests are answered', {
    timeout: 120_000,
  }, async () => {
    const flooded = join(work, `flood-${user}`);
    await mkdir(flooded);
    await chmod(flooded, 0o777);
    await peer.request('fs/watch', { watchId: 'flood', path: flooded });
    await pause(300);
    const count = 3000;
    const running = exec(
      peer,
      `cd ${flooded} && i=0; while [ $i -lt ${count} ]; do : > f$i; i=$((i+1)); done; echo done`,
      { timeoutMs: 100_000 },
    );
    // Requests sent while the flood runs are answered.
    for (let i = 0; i < 10; i++) {
      expect((await peer.request('fs/getMetadata', { path: flooded })).result).toMatchObject({
        isDirectory: true,
      });
    }
    expect((await running).result).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    await pause(700);
    const batches = peer.notifications.splice(0).filter((m) => m.method === 'fs/changed');
    expect(batches.length).toBeGreaterThan(0);
    for (const batch of batches) {
      const paths = (batch.params?.changedPaths ?? []) as string[];
      expect(paths.length).toBeLessThanOrEqual(LIMITS.watchPendingPaths);
      for (const path of paths) expect(path.startsWith(flooded)).toBe(true);
    }
    // The watch still works after the flood.
    await writeFile(join(flooded, 'control.txt'), 'x');
    expect(await changesUntil(peer, join(flooded, 'control.txt'))).toContain(join(flooded, 'control.txt'));
    await peer.request('fs/unwatch', { watchId: 'flood' });
  });

  it('command/exec policies cannot widen the server’s', { timeout: 120_000 }, async () => {
    const escapeLink = join(work, `escape-${user}`);
    await symlink(outside, escapeLink);
    const before = await snapshotTree(outside);
    // Each runs (under at most the server's policy, and its write outside fails), or is refused
    // before anything runs because its cwd is not one the sandbox shows.
    const attempts: Array<[string, Record<string, unknown>, 'runs' | 'refused']> = [
      [
        'a writable root through a symlink to outside',
        { sandboxPolicy: { type: 'workspaceWrite', writableRoots: [escapeLink] } },
        'runs',
      ],
      [
        'a writable root spelled with ..',
        { sandboxPolicy: { type: 'workspaceWrite', writableRoots: [`${work}/../outside`] } },
        'runs',
      ],
      [
        'the whole disk as a writable root',
        { sandboxPolicy: { type: 'workspaceWrite', writableRoots: ['/'] } },
        'runs',
      ],
      ['externalSandbox', { sandboxPolicy: { type: 'externalSandbox', networkAccess: 'enabled' } }, 'runs'],
      [':danger-full-access', { permissionProfile: ':danger-full-access' }, 'runs'],
      [
        ':workspace in a cwd through a symlink to outside',
        { permissionProfile: ':workspace', cwd: escapeLink },
        'refused',
      ],
      [':workspace in a cwd outside', { permissionProfile: ':workspace', cwd: outside }, 'refused'],
      ['a relative cwd climbing out', { permissionProfile: ':workspace', cwd: '../outside' }, 'refused'],
    ];
    for (const [what, policy, outcome] of attempts) {
      const reply = await exec(
        peer,
        `echo pwned > ${outside}/o.txt; echo pwned > ${escapeLink}/new.txt; echo $?`,
        policy,
      );
      if (outcome === 'runs') {
        expect(reply.result, what).toMatchObject({ exitCode: 0 });
        expect(String(reply.result?.stdout).trim(), what).not.toBe('0');
      } else
        expect(reply.error, what).toMatchObject({ code: -32600, data: { errorKind: 'permission_denied' } });
    }
    // readOnly keeps the workspace read-only, whatever else it asks for.
    const readOnly = await exec(peer, `echo x > ${work}/ro-${user}.txt; echo $?`, {
      sandboxPolicy: { type: 'readOnly', networkAccess: true },
    });
    expect(String(readOnly.result?.stdout).trim()).not.toBe('0');
    // The network stays off when the server's policy has it off, whatever the request asks.
    const network = await exec(peer, 'cat /proc/net/dev', {
      sandboxPolicy: { type: 'workspaceWrite', networkAccess: true },
    });
    const interfaces = String(network.result?.stdout)
      .split('\n')
      .slice(2)
      .map((line) => line.split(':')[0]?.trim())
      .filter((name) => name !== undefined && name !== '');
    expect(interfaces).toEqual(['lo']);
    expect(await snapshotTree(outside)).toEqual(before);
    expect(await readFile(join(outside, 'o.txt'), 'utf8')).toBe('outside\n');
    await rm(escapeLink);
  });
});

describe.each(['root', 'nobody'] as const)('app-server watches through /proc, as %s', (user) => {
  it('refuses procfs aliases and directories that are not where their path says', {
    timeout: 60_000,
  }, async () => {
    // Read-only reads the whole disk, /proc included: only the watch's own checks stand.
    const peer = start(user, ['--profile', 'read-only']);
    const procLink = join(work, `proc-link-${user}`);
    const secretLink = join(work, `secret-link-${user}`);
    await symlink('/proc/self/fd', procLink);
    await symlink(join('/proc/self/root', work, 'secret'), secretLink);
    try {
      await peer.initialize();
      for (const path of [
        '/proc/self/cwd',
        '/proc/self/fd',
        '/proc/self/fd/0',
        join('/proc/self/root', work, 'secret'),
        '/dev/fd',
        '/proc/1/cwd',
        procLink,
        secretLink,
        '/proc/self',
      ]) {
        const reply = await peer.request('fs/watch', { watchId: path, path });
        expect(reply.error, path).toMatchObject({ code: -32600, data: { errorKind: 'permission_denied' } });
      }
      // The control: an ordinary directory under the same policy is watched.
      expect((await peer.request('fs/watch', { watchId: 'ok', path: work })).result).toEqual({ path: work });
    } finally {
      await peer.stop();
      await rm(procLink);
      await rm(secretLink);
    }
  });
});

/** `fs-sandbox app-server` on a WebSocket, as `user`; resolves with its address once it listens. */
async function startWebSocketAppServer(
  user: CliUser,
  tokenFile: string,
): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const argv = [
    ...userPrefix(user),
    process.execPath,
    CLI_BIN,
    'app-server',
    '--listen',
    'ws://127.0.0.1:0',
    '--token-file',
    tokenFile,
    '--cwd',
    work,
  ];
  const child = spawn(argv[0] as string, argv.slice(1), { cwd: work, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (ws:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`app-server exited with ${code}: ${stderr}`)));
  });
  return { child, url };
}

describe.each(['root', 'nobody'] as const)('another connection’s process ids, as %s', (user) => {
  it('are unknown ids on this connection, and its processes run on', { timeout: 60_000 }, async () => {
    const tokenFile = join(dir, `token-${user}`);
    await writeFile(tokenFile, `red-team-token-${user}\n`, { mode: 0o644 });
    const server = await startWebSocketAppServer(user, tokenFile);
    const owner = AppServerClient.overWebSocket(server.url, `red-team-token-${user}`);
    const other = AppServerClient.overWebSocket(server.url, `red-team-token-${user}`);
    try {
      await owner.initialize();
      await other.initialize();
      expect(
        (
          await owner.request('process/spawn', {
            command: ['cat'],
            processHandle: 'h',
            cwd: work,
            streamStdin: true,
          })
        ).result,
      ).toEqual({});
      const command = owner.request('command/exec', {
        command: ['cat'],
        processId: 'c',
        streamStdin: true,
        streamStdoutStderr: true,
      });
      const size = { rows: 10, cols: 10 };
      const probes: Array<[string, (id: string) => Record<string, unknown>]> = [
        ['process/writeStdin', (id) => ({ processHandle: id, deltaBase64: 'eAo=' })],
        ['process/writeStdin', (id) => ({ processHandle: id, closeStdin: true })],
        ['process/resizePty', (id) => ({ processHandle: id, size })],
        ['process/kill', (id) => ({ processHandle: id })],
        ['command/exec/write', (id) => ({ processId: id, deltaBase64: 'eAo=', closeStdin: true })],
        ['command/exec/resize', (id) => ({ processId: id, size })],
        ['command/exec/terminate', (id) => ({ processId: id })],
      ];
      for (const [method, params] of probes) {
        const id = method.startsWith('process/') ? 'h' : 'c';
        const foreign = await other.request(method, params(id));
        const unknown = await other.request(method, params('nope'));
        expect(foreign.error, method).toEqual({
          ...unknown.error,
          message: unknown.error?.message.replace('"nope"', `"${id}"`),
        });
      }
      // Both processes are untouched: they echo what their owner writes and exit when it closes.
      await owner.request('process/writeStdin', {
        processHandle: 'h',
        deltaBase64: 'aGkK',
        closeStdin: true,
      });
      const [exited] = (await owner.notificationsUntil((m) => m.method === 'process/exited')).slice(-1);
      expect(exited?.params).toMatchObject({ exitCode: 0, stdout: 'hi\n' });
      await owner.request('command/exec/write', { processId: 'c', deltaBase64: 'eW8K', closeStdin: true });
      expect((await command).result).toMatchObject({ exitCode: 0 });
    } finally {
      await owner.stop();
      await other.stop();
      server.child.kill('SIGTERM');
    }
  });
});
