import { chmod, lchown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServeProcess } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NOBODY_UID, runCli, USERS } from './support/cli.js';

/**
 * What `why` (fs/explainAccess) says is what the kernel lets a command and a helper read. Under the
 * default profile (the minimal roots, the workspace) and under a policy with no minimal entry (the
 * workspace alone: the sandbox then shows the runtime's roots, /usr and the like, but not /etc),
 * and under the read-only profile (the whole disk read), for /etc/hostname, /usr/bin/env, a
 * workspace file, a file outside and /etc/shadow (which a root broker's command could read if the
 * minimal set or the whole-disk read granted it): a command's `cat`, the
 * helper's fs/readFile with the pre-check and without it, and the explanation agree.
 */

let base: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-explain-agreement-');
  await chmod(base, 0o755);
  await writeFile(join(base, 'outside.txt'), 'outside\n', { mode: 0o644 });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const env = { PATH: '/usr/bin:/bin' };

/** The default profile (`minimal` and the workspace), the workspace alone, or the read-only profile (`root`). */
function context(ws: string, grant: 'minimal' | 'workspace' | 'root'): unknown {
  const special = (kind: string) => ({ path: { type: 'special', value: { kind } }, access: 'read' });
  const workspace = { path: { type: 'path', path: `file://${ws}` }, access: 'write' };
  const entries =
    grant === 'root'
      ? [special('root')]
      : grant === 'minimal'
        ? [special('minimal'), workspace]
        : [workspace];
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    cwd: `file://${ws}`,
    windowsSandboxLevel: 'disabled',
  };
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let ws: string;
  let serve: ServeProcess;
  let unchecked: ServeProcess;

  beforeAll(async () => {
    ws = join(base, `ws-${user}`);
    await mkdir(ws);
    await writeFile(join(ws, 'mine.txt'), 'mine\n');
    if (user === 'nobody') {
      await lchown(ws, NOBODY_UID, NOBODY_UID);
      await lchown(join(ws, 'mine.txt'), NOBODY_UID, NOBODY_UID);
    }
    serve = ServeProcess.start([], { user, env, cwd: ws });
    unchecked = ServeProcess.start(['--no-precheck'], { user, env, cwd: ws });
    await Promise.all([serve.handshake(), unchecked.handshake()]);
  });

  afterAll(async () => {
    await Promise.all([serve.stop(), unchecked.stop()]);
  });

  const cases = [
    [
      'the default profile',
      'minimal',
      // /etc/shadow: a root-only secret the minimal set does not grant (a root broker's command
      // could read it otherwise).
      {
        '/etc/hostname': 'read',
        '/usr/bin/env': 'read',
        mine: 'write',
        outside: 'none',
        '/etc/shadow': 'none',
      },
    ],
    [
      'a policy with no minimal entry',
      'workspace',
      {
        '/etc/hostname': 'none',
        '/usr/bin/env': 'read',
        mine: 'write',
        outside: 'none',
        '/etc/shadow': 'none',
      },
    ],
    [
      'the read-only profile (the whole disk read)',
      'root',
      // /etc/shadow: a whole-disk read does not include the root-only secrets either.
      {
        '/etc/hostname': 'read',
        '/usr/bin/env': 'read',
        mine: 'read',
        outside: 'read',
        '/etc/shadow': 'none',
      },
    ],
  ] as const;

  it.each(cases)('under %s: why, a command and the helper agree', async (_name, grant, expected) => {
    const paths = Object.keys(expected).map((key) =>
      key === 'mine' ? join(ws, 'mine.txt') : key === 'outside' ? join(base, 'outside.txt') : key,
    );
    const sandbox = context(ws, grant);
    const options = { user, env, cwd: ws, timeoutMs: 30_000 };
    // The CLI's `why` for one path, the server's fs/explainAccess for all.
    const why = await runCli(
      ['why', '--json', '--sandbox', JSON.stringify(sandbox), paths[0] as string],
      options,
    );
    const explained: string[] = [];
    for (const path of paths) {
      const reply = await serve.request('fs/explainAccess', { path: `file://${path}`, sandbox });
      explained.push((reply.result as { access: string }).access);
    }
    expect(explained).toEqual(Object.values(expected));
    expect((JSON.parse(why.stdout) as { access: string }).access).toBe(explained[0]);
    const script = paths.map((path) => `cat ${path} >/dev/null 2>&1 && echo yes || echo no`).join('; ');
    const command = await runCli(
      ['run', '--sandbox', JSON.stringify(sandbox), '--', '/bin/sh', '-c', script],
      options,
    );
    const read = async (server: ServeProcess, path: string) =>
      (await server.request('fs/readFile', { path: `file://${path}`, sandbox })).result !== undefined;
    const readable = explained.map((access) => access !== 'none');
    expect({
      command: command.stdout
        .trim()
        .split('\n')
        .map((line) => line === 'yes'),
      helper: await Promise.all(paths.map((path) => read(serve, path))),
      'helper without the pre-check': await Promise.all(paths.map((path) => read(unchecked, path))),
    }).toEqual({ command: readable, helper: readable, 'helper without the pre-check': readable });
  });
});
