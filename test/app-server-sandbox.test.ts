import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './fixtures/conformance/serve-process.js';
import { type AppMessage, AppServerClient } from './support/app-server-client.js';
import { type CliUser, NOBODY_UID } from './support/cli.js';
import { processesMatching, waitFor } from './support/processes.js';
import { snapshotTree } from './support/tree-snapshot.js';

/**
 * What only `fs-sandbox app-server` does: every V2 request under the server's policy (here
 * `--cwd work --deny work/secret --deny '**\/*.env'`). The reference serves these same requests
 * as its own user on the host. Each case tries the attack and checks the host afterwards, as root
 * and as nobody.
 */

let dir: string;
let work: string;
let outside: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-app-server-sandbox-'));
  await chmod(dir, 0o755);
  work = join(dir, 'work');
  outside = join(dir, 'outside');
  await mkdir(join(work, 'secret'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(work, 'secret', 'key.txt'), 'top secret\n');
  await writeFile(join(work, 'app.env'), 'TOKEN=1\n');
  await writeFile(join(work, 'f.txt'), 'hello\n');
  await writeFile(join(outside, 'o.txt'), 'outside\n');
  await chmod(work, 0o777);
  await chmod(outside, 0o777);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function start(user: CliUser, extra: string[] = []): AppServerClient {
  return AppServerClient.ours(
    ['--cwd', work, '--deny', join(work, 'secret'), '--deny', '**/*.env', ...extra],
    {
      cwd: work,
      env: {
        ...(process.env as Record<string, string>),
        APP_SERVER_SECRET_TOKEN: 'do-not-leak',
        MY_PRIVATE: 'hidden',
      },
      prefix:
        user === 'root'
          ? []
          : ['setpriv', `--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups'],
    },
  );
}

async function exec(peer: AppServerClient, command: string, extra: Record<string, unknown> = {}) {
  const reply = await peer.request('command/exec', { command: ['sh', '-c', command], ...extra });
  return reply.result as { exitCode: number; stdout: string; stderr: string };
}

describe.each(['root', 'nobody'] as const)('app-server under its policy, as %s', (user) => {
  it('fs methods refuse denied and outside paths; a command cannot write outside, read denied files or see secrets', {
    timeout: 60_000,
  }, async () => {
    const before = await snapshotTree(dir);
    const peer = start(user);
    try {
      await peer.initialize();
      const refused = async (method: string, params: unknown) => {
        const reply = await peer.request(method, params);
        expect(reply.error, `${method} ${JSON.stringify(params)}`).toMatchObject({ code: -32600 });
        return reply.error as NonNullable<AppMessage['error']>;
      };
      await refused('fs/readFile', { path: join(work, 'secret', 'key.txt') });
      await refused('fs/readFile', { path: join(work, 'app.env') });
      await refused('fs/writeFile', { path: join(outside, 'new.txt'), dataBase64: 'eA==' });
      await refused('fs/remove', { path: join(outside, 'o.txt') });
      await refused('fs/copy', {
        sourcePath: join(work, 'secret', 'key.txt'),
        destinationPath: join(work, 'k.txt'),
      });

      const writeOutside = await exec(
        peer,
        `echo x > ${outside}/o.txt; echo x > ${outside}/new.txt; echo $?`,
      );
      expect(writeOutside.stdout.trim()).not.toBe('0');
      const readDenied = await exec(peer, `cat ${work}/secret/key.txt ${work}/app.env; echo done`);
      expect(readDenied.stdout).not.toContain('top secret');
      expect(readDenied.stdout).not.toContain('TOKEN=1');
      const env = await exec(peer, 'env');
      expect(env.stdout).not.toContain('do-not-leak');
      expect(env.stdout).not.toContain('hidden');
      // A sandboxPolicy cannot widen the server's policy: a writable root outside it stays read-only.
      const widened = await exec(peer, `echo x > ${outside}/o.txt; echo $?`, {
        sandboxPolicy: { type: 'workspaceWrite', writableRoots: [outside] },
      });
      expect(widened.stdout.trim()).not.toBe('0');
      const full = await exec(peer, `echo x > ${outside}/o.txt; echo $?`, {
        sandboxPolicy: { type: 'dangerFullAccess' },
      });
      expect(full.stdout.trim()).not.toBe('0');
      // process/spawn runs sandboxed too.
      await peer.request('process/spawn', {
        command: ['sh', '-c', `echo x > ${outside}/spawned.txt; cat ${work}/secret/key.txt`],
        processHandle: 'p',
        cwd: work,
      });
      const [exited] = (await peer.notificationsUntil((m) => m.method === 'process/exited')).slice(-1);
      expect(exited?.params?.exitCode).not.toBe(0);
      expect(String(exited?.params?.stdout)).not.toContain('top secret');
      // Inside the policy everything works.
      const inside = await exec(peer, `echo ok > ${work}/made.txt && cat ${work}/made.txt`);
      expect(inside).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
    } finally {
      await peer.stop();
      await rm(join(work, 'made.txt'), { force: true });
    }
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it('a watch on a denied or outside path is refused; a workspace watch never names a denied path', {
    timeout: 60_000,
  }, async () => {
    const peer = start(user);
    try {
      await peer.initialize();
      for (const path of [
        join(work, 'secret'),
        join(work, 'secret', 'key.txt'),
        join(work, 'new.env'),
        '/root',
      ]) {
        const reply = await peer.request('fs/watch', { watchId: path, path });
        expect(reply.error, path).toMatchObject({ code: -32600 });
      }
      expect((await peer.request('fs/watch', { watchId: 'ws', path: work })).result).toEqual({ path: work });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await writeFile(join(work, 'other.env'), 'A=1\n');
      await writeFile(join(work, 'secret', 'more.txt'), 'more\n');
      await rm(join(work, 'secret', 'more.txt'));
      await writeFile(join(work, 'control.txt'), 'visible\n');
      const changed = await peer.notificationsUntil(
        (m) =>
          m.method === 'fs/changed' &&
          ((m.params?.changedPaths ?? []) as string[]).includes(join(work, 'control.txt')),
      );
      await new Promise((resolve) => setTimeout(resolve, 400));
      const named = [...changed, ...peer.notifications.splice(0)]
        .filter((m) => m.method === 'fs/changed')
        .flatMap((m) => m.params?.changedPaths as string[]);
      expect(named).toContain(join(work, 'control.txt'));
      expect(named.filter((path) => path.endsWith('.env') || path.includes('/secret'))).toEqual([]);
    } finally {
      await peer.stop();
      await rm(join(work, 'other.env'), { force: true });
      await rm(join(work, 'control.txt'), { force: true });
    }
  });

  it('refuses dangerFullAccess under --require-sandbox, and kills its processes when the connection closes', {
    timeout: 60_000,
  }, async () => {
    const peer = start(user, ['--require-sandbox']);
    await peer.initialize();
    const refused = await peer.request('command/exec', {
      command: ['true'],
      sandboxPolicy: { type: 'dangerFullAccess' },
    });
    expect(refused.error).toMatchObject({ code: -32600, data: { errorKind: 'permission_denied' } });
    const marker = `app-server-close-${user}-${Date.now()}`;
    await peer.request('process/spawn', {
      // The marker (the shell's $0) stays in bwrap's command line for as long as the sleep runs.
      command: ['sh', '-c', 'sleep 600', marker],
      processHandle: 'long',
      cwd: work,
      timeoutMs: null,
    });
    const running = peer.request('command/exec', {
      command: ['sh', '-c', 'sleep 601', marker],
      processId: 'long2',
      disableTimeout: true,
    });
    await waitFor(
      () =>
        processesMatching(`sleep 600 ${marker}`).length > 0 &&
        processesMatching(`sleep 601 ${marker}`).length > 0
          ? true
          : undefined,
      30_000,
      'both shells',
    );
    // The client ends its input: as the reference, the server ends what it started and exits,
    // answering the command/exec it was running with the killed command's exit.
    await peer.stop();
    expect((await running).result).toMatchObject({ exitCode: 137 });
    await waitFor(
      () => (processesMatching(marker).length === 0 ? true : undefined),
      10_000,
      'the sleeps to end',
    );
    await expect(stat(join(outside, 'o.txt'))).resolves.toBeDefined();
    expect(await readFile(join(outside, 'o.txt'), 'utf8')).toBe('outside\n');
  });
});
