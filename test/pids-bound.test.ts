import { readdirSync } from 'node:fs';
import { chmod, lchown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServeProcess } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NOBODY_UID, runCli, USERS } from './support/cli.js';
import { processesMatching } from './support/processes.js';

/**
 * A command's sandbox holds at most `--max-processes` tasks where `doctor` says a mechanism bounds
 * them: a cgroup of its own as root here (cgroup v1 pids), RLIMIT_NPROC in the sandbox's user
 * namespace as nobody. Through `run` and `process/start`: a program that forks 40 children gets
 * only what the bound leaves, a real fork bomb is stopped by count (and by --timeout, so this test
 * is bounded in time as well), nothing is left running and no cgroup is left behind.
 */

const BOUND = 16;
const env = { PATH: '/usr/bin:/bin' };

/** Forks 40 sleeping children, then reports how many it got, how many forks failed, and /proc's count. */
const FORKER = `
import os, time, sys
children, refused = [], 0
for i in range(40):
    try:
        pid = os.fork()
        if pid == 0:
            time.sleep(float(sys.argv[1]))
            os._exit(0)
        children.append(pid)
    except OSError:
        refused += 1
seen = len([name for name in os.listdir('/proc') if name.isdigit()])
print('started', len(children), 'refused', refused, 'seen', seen)
`;

/** A classic fork bomb, marked so that its processes can be looked for on the host. */
const BOMB = (marker: string) => `exec -a ${marker} /bin/sh -c 'bomb() { bomb | bomb & }; bomb; sleep 30'`;

let base: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-pids-');
  await chmod(base, 0o755);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function cgroupsLeft(): string[] {
  try {
    return readdirSync('/sys/fs/cgroup/pids').filter((name) => name.startsWith('fs-sandbox-'));
  } catch {
    return [];
  }
}

/**
 * No cgroup made since `before` remains. Another e2e file running beside this one may have a
 * command (with its own cgroup) alive at the moment: those end with their commands, so the check
 * polls for a while; one this run leaked never goes away.
 */
async function expectNoNewCgroups(before: string[]): Promise<void> {
  const fresh = () => cgroupsLeft().filter((name) => !before.includes(name));
  const deadline = Date.now() + 15_000;
  while (fresh().length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(fresh()).toEqual([]);
}

function parse(stdout: string): { started: number; refused: number; seen: number } {
  const match = /started (\d+) refused (\d+) seen (\d+)/.exec(stdout);
  if (match === null) throw new Error(`no report in: ${stdout}`);
  return { started: Number(match[1]), refused: Number(match[2]), seen: Number(match[3]) };
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let ws: string;

  beforeAll(async () => {
    ws = join(base, user);
    await mkdir(ws);
    if (user === 'nobody') await lchown(ws, NOBODY_UID, NOBODY_UID);
  });

  it('doctor names the mechanism that holds here', async () => {
    const doctor = await runCli(['doctor'], { user, env, cwd: ws, timeoutMs: 60_000 });
    const row = doctor.stdout.split('\n').find((line) => line.startsWith('process bound')) ?? '';
    expect(row).toMatch(user === 'root' ? /ok\s+cgroup v1 pids\.max/ : /ok\s+RLIMIT_NPROC/);
  });

  it('through run: a program gets only the processes the bound leaves, and nothing stays behind', async () => {
    const before = cgroupsLeft();
    const done = await runCli(
      ['run', '--max-processes', String(BOUND), '--', '/usr/bin/python3', '-c', FORKER, '0.5'],
      { user, env, cwd: ws, timeoutMs: 30_000 },
    );
    const report = parse(done.stdout);
    expect(report.refused).toBeGreaterThan(0);
    expect(report.seen).toBeLessThanOrEqual(BOUND);
    expect(report.started + report.refused).toBe(40);
    await expectNoNewCgroups(before);
    // The default bound leaves the same program all 40.
    const unbounded = parse(
      (await runCli(['run', '--', '/usr/bin/python3', '-c', FORKER, '0'], { user, env, cwd: ws })).stdout,
    );
    expect(unbounded).toMatchObject({ started: 40, refused: 0 });
  });

  it('through run: a fork bomb is stopped by count, then by --timeout, and leaves no process or cgroup', async () => {
    const before = cgroupsLeft();
    const marker = `fs-sandbox-bomb-${process.pid}-${user}`;
    const started = Date.now();
    const done = await runCli(
      ['run', '--max-processes', '32', '--timeout', '3000', '--', '/bin/bash', '-c', BOMB(marker)],
      { user, env, cwd: ws, timeoutMs: 30_000 },
    );
    // Ended by --timeout (124), or earlier when its shell, refused a fork, gave up (2).
    expect([2, 124]).toContain(done.code);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(processesMatching(marker)).toEqual([]);
    await expectNoNewCgroups(before);
  });

  it('through process/start: the served broker bounds every command it starts', async () => {
    const serve = ServeProcess.start(['--max-processes', String(BOUND)], { user, env, cwd: ws });
    await serve.handshake();
    const from = serve.rawLines.length;
    const reply = await serve.request('process/start', {
      processId: 'forker',
      argv: ['/usr/bin/python3', '-c', FORKER, '0.5'],
      cwd: `file://${ws}`,
      env,
      tty: false,
      sandbox: {
        permissions: {
          type: 'managed',
          file_system: {
            type: 'restricted',
            entries: [
              { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
              { path: { type: 'path', path: `file://${ws}` }, access: 'write' },
            ],
          },
          network: 'restricted',
        },
        windowsSandboxLevel: 'disabled',
      },
    });
    expect(reply.result).toMatchObject({ sandboxType: 'linuxSeccomp' });
    const deadline = Date.now() + 30_000;
    while (!serve.rawLines.slice(from).some((line) => line.includes('"process/closed"'))) {
      if (Date.now() > deadline) throw new Error(`the command did not close: ${serve.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const output = serve.rawLines
      .slice(from)
      .map((line) => JSON.parse(line) as { method?: string; params?: { stream?: string; chunk?: string } })
      .filter((message) => message.method === 'process/output' && message.params?.stream === 'stdout')
      .map((message) => Buffer.from(message.params?.chunk ?? '', 'base64').toString())
      .join('');
    const report = parse(output);
    expect(report.refused).toBeGreaterThan(0);
    expect(report.seen).toBeLessThanOrEqual(BOUND);
    await serve.stop();
    expect(cgroupsLeft().filter((name) => name.startsWith(`fs-sandbox-${serve.pid}-`))).toEqual([]);
  });
});
