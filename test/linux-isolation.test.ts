import { spawn } from 'node:child_process';
import { chmod, copyFile, lchown, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveHelperRuntime } from '@fs-sandbox/broker';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bunExecutable, compileWithBun } from '../scripts/bun-compile.mjs';
import { CLI_BIN, ensureBuilt, REPO } from './support/build.js';
import { type CliUser, callMethod, cliCommand, NOBODY_UID, USERS } from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { processesMatching, waitFor } from './support/processes.js';
import { diffTrees, snapshotTree } from './support/tree-snapshot.js';

/**
 * What a helper can see and do beyond the file operations: the broker's environment, mounts,
 * namespaces, and its own lifetime. A probe program stands in for the helper bundle
 * (FS_SANDBOX_HELPER_BUNDLE) and runs under exactly the bwrap command the CLI builds.
 */

const PROBE = fileURLToPath(new URL('./support/probe-helper.cjs', import.meta.url));
const MARKER = fileURLToPath(new URL('./support/marker-preload.cjs', import.meta.url));
const SECRETS = {
  OPENAI_API_KEY: 'sk-e2e-openai-0123456789abcdef',
  FS_SANDBOX_E2E_CUSTOM_SECRET: 'custom-secret-fedcba9876543210',
};
// The allowlist, plus PWD, which bwrap itself sets to the --chdir directory.
const ALLOWED_HELPER_ENV = ['PATH', 'PWD', 'TEMP', 'TMP', 'TMPDIR'];

let runtimeKind: 'node' | 'bun';
/** The probe as the helper runtime of this run takes a program: the script for node, compiled for Bun. */
let probe: string;
let probeDir: string | null = null;

beforeAll(async () => {
  ensureBuilt();
  // The runtime the CLI's helpers run under in this test run (FS_SANDBOX_HELPER_RUNTIME, else auto).
  const env = { PATH: '/usr/bin:/bin', FS_SANDBOX_HELPER_RUNTIME: process.env.FS_SANDBOX_HELPER_RUNTIME };
  runtimeKind = (await resolveHelperRuntime('linux', env)).executable.kind;
  probe = PROBE;
  if (runtimeKind === 'bun') {
    const bun = bunExecutable();
    if (bun === null) throw new Error('the Bun helper runs, yet no Bun package is installed');
    // Traversable by nobody, unlike a mkdtemp directory: the probe runs as nobody too.
    probeDir = await mkdtemp('/tmp/fs-sandbox-probe-');
    await chmod(probeDir, 0o755);
    probe = join(probeDir, 'probe-helper');
    compileWithBun(bun, PROBE, probe);
  }
}, 120_000);

afterAll(async () => {
  if (probeDir !== null) await rm(probeDir, { recursive: true, force: true });
});

interface ProbeReport {
  uid: number;
  env: Record<string, string>;
  execArgv: string[];
  selfEnviron: { ok: boolean; text?: string };
  initEnviron: { ok: boolean; text?: string };
  capabilities: string[];
  interfaces: string[];
  processes: string[];
  mounts: { command: string; status: number | null; stderr: string }[];
  afterMountAttempts: {
    gitHeadWrite: { ok: boolean };
    deniedRead: { ok: boolean; text?: string };
    subListing: string[];
    outsideWrite: { ok: boolean };
    rootWrite: { ok: boolean };
  };
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let fixture: Fixture;

  beforeEach(async () => {
    fixture = await createFixture(user);
  });

  afterEach(async () => {
    await removeFixture(fixture);
  });

  /** The broker environment with secrets and hostile loader variables, and a marker that NODE_OPTIONS loads. */
  async function hostileEnv(): Promise<Record<string, string>> {
    const marker = join(fixture.ws, 'marker-preload.cjs');
    await copyFile(MARKER, marker);
    if (user === 'nobody') await lchown(marker, NOBODY_UID, NOBODY_UID);
    return cliEnv(fixture, {
      ...SECRETS,
      NODE_OPTIONS: `--require ${marker}`,
      LD_PRELOAD: '/nonexistent/libfs-sandbox-evil.so',
    });
  }

  async function markerLines(): Promise<string[]> {
    try {
      return (await readFile(join(fixture.ws, 'markers.log'), 'utf8')).trim().split('\n');
    } catch {
      return [];
    }
  }

  it('keeps broker secrets, NODE_OPTIONS and LD_PRELOAD out of the real helper', async () => {
    const env = await hostileEnv();
    const target = join(fixture.ws, 'written.txt');
    const outcome = await callMethod(
      'fs/writeFile',
      {
        path: uri(target),
        dataBase64: Buffer.from('ok\n').toString('base64'),
        sandbox: workspaceContext(fixture),
      },
      { user, env },
    );
    expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
    expect(await readFile(target, 'utf8')).toBe('ok\n');
    // NODE_OPTIONS works in the broker itself (the control), and never reached the helper.
    const lines = await markerLines();
    expect(lines.some((line) => line.endsWith(CLI_BIN))).toBe(true);
    expect(lines.filter((line) => !line.endsWith(CLI_BIN))).toEqual([]);

    const environ = await callMethod(
      'fs/readFile',
      {
        path: 'file:///proc/self/environ',
        sandbox: {
          permissions: {
            type: 'managed',
            file_system: {
              type: 'restricted',
              entries: [{ path: { type: 'special', value: { kind: 'root' } }, access: 'read' }],
            },
          },
        },
      },
      { user, env },
    );
    const seen = environ.result
      ? Buffer.from(String(environ.result.dataBase64), 'base64').toString()
      : environ.run.stdout;
    for (const value of Object.values(SECRETS)) expect(seen).not.toContain(value);
    expect(seen).not.toContain('NODE_OPTIONS');
    expect(seen).not.toContain('LD_PRELOAD');
  });

  it('runs the helper with only the allowlisted environment, no capabilities, no network, alone in its pid namespace', async () => {
    const env = { ...(await hostileEnv()), FS_SANDBOX_HELPER_BUNDLE: probe };
    const outcome = await callMethod(
      'fs/getMetadata',
      { path: uri(fixture.ws), sandbox: workspaceContext(fixture) },
      { user, env },
    );
    expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
    const report = outcome.result as unknown as ProbeReport;

    expect(Object.keys(report.env).every((name) => ALLOWED_HELPER_ENV.includes(name))).toBe(true);
    // Nothing beyond the hardening compiled into the Bun helper (nothing for node).
    expect(report.execArgv).toEqual(runtimeKind === 'bun' ? ['--no-addons'] : []);
    for (const environ of [
      report.selfEnviron.text ?? '',
      report.initEnviron.text ?? '',
      JSON.stringify(report.env),
    ]) {
      for (const value of Object.values(SECRETS)) expect(environ).not.toContain(value);
      expect(environ).not.toContain('NODE_OPTIONS');
      expect(environ).not.toContain('LD_PRELOAD');
      expect(environ).not.toContain('FS_SANDBOX_HELPER_BUNDLE');
    }
    expect(await markerLines()).toEqual([expect.stringContaining(CLI_BIN)]);
    expect(report.capabilities).toContain('CapEff:\t0000000000000000');
    expect(report.capabilities).toContain('CapBnd:\t0000000000000000');
    expect(report.interfaces.filter((name) => name !== 'lo')).toEqual([]);
    // bwrap's init, the helper, and the ps-like probe child at most: no host process is visible.
    expect(report.processes.length).toBeLessThanOrEqual(3);
    expect(report.uid).toBe(user === 'root' ? 0 : NOBODY_UID);
  });

  it('cannot remount, unmount or mount anything, nor open a user namespace, even as root', async () => {
    const before = await snapshotTree(fixture.base);
    const env = { ...cliEnv(fixture), FS_SANDBOX_HELPER_BUNDLE: probe };
    const outcome = await callMethod(
      'fs/getMetadata',
      { path: uri(fixture.ws), sandbox: workspaceContext(fixture) },
      { user, env },
    );
    expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
    const report = outcome.result as unknown as ProbeReport;
    for (const attempt of report.mounts)
      expect(attempt.status, `${attempt.command}: ${attempt.stderr}`).not.toBe(0);
    expect(report.afterMountAttempts).toEqual({
      gitHeadWrite: { ok: false, error: 'EROFS' },
      deniedRead: { ok: false, error: 'EACCES' },
      subListing: ['a.txt'],
      outsideWrite: { ok: false, error: 'ENOENT' },
      rootWrite: { ok: false, error: 'EROFS' },
    });
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });

  it('leaves no helper or bwrap process behind when the broker is killed mid-operation', async () => {
    const env = { ...cliEnv(fixture), FS_SANDBOX_HELPER_BUNDLE: probe };
    const params = { path: uri(join(fixture.ws, 'sleep')), sandbox: workspaceContext(fixture) };
    const command = cliCommand(user, ['call', 'fs/getMetadata', JSON.stringify(params)]);
    const cli = spawn(command.file, command.args, { cwd: REPO, env, stdio: 'ignore' });
    const exited = new Promise((resolve) => cli.on('close', resolve));
    // bwrap and the probe's own process inside the sandbox (a Bun probe also runs once, briefly,
    // outside any sandbox: the broker's self-check, which has no bwrap around it).
    await waitFor(
      () => {
        const found = processesMatching(probe);
        const sandboxed = found.some((p) => p.cmdline.includes('bwrap'));
        return sandboxed && found.some((p) => !p.cmdline.includes('bwrap')) ? found : undefined;
      },
      20_000,
      'the sandboxed probe to start',
    );
    cli.kill('SIGKILL');
    await exited;
    // bwrap --die-with-parent and the pid namespace take the helper down with the broker.
    await waitFor(
      () => (processesMatching(probe).length === 0 ? true : undefined),
      10_000,
      'the sandbox to die',
    );
  });

  it('leaves nothing behind: the fixture changes only by what was reported, TMPDIR stays empty', async () => {
    const before = await snapshotTree(fixture.base);
    const tmpBefore = user === 'nobody' ? await entriesOwnedBy('/tmp', NOBODY_UID) : [];
    const sandbox = workspaceContext(fixture);
    const options = { user, env: cliEnv(fixture) };
    const written = join(fixture.ws, 'new', 'file.bin');
    const data = Buffer.alloc(256 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;
    expect(
      (await callMethod('fs/createDirectory', { path: uri(join(fixture.ws, 'new')), sandbox }, options)).code,
    ).toBe(0);
    expect(
      (
        await callMethod(
          'fs/writeFile',
          { path: uri(written), dataBase64: data.toString('base64'), sandbox },
          options,
        )
      ).code,
    ).toBe(0);
    await callMethod(
      'fs/writeFile',
      { path: uri(join(fixture.outside, 'x')), dataBase64: 'eA==', sandbox },
      options,
    );
    await callMethod('fs/readFile', { path: uri(join(fixture.ws, 'fifo')), sandbox }, options);

    const changes = diffTrees(before, await snapshotTree(fixture.base));
    expect(changes.map((change) => change.split(' (')[0])).toEqual(['added ws/new', 'added ws/new/file.bin']);
    expect((await readFile(written)).equals(data)).toBe(true);
    expect(await readdir(fixture.tmp)).toEqual([]);
    // Other test files share /tmp, as root, and as nobody for their fixtures and served brokers
    // (running beside this one): entries owned by nobody other than those can only come from these runs.
    if (user === 'nobody') expect(await entriesOwnedBy('/tmp', NOBODY_UID)).toEqual(tmpBefore);
  });
});

/** The directories other test files make for nobody (createFixture, useServedBroker): mkdtemp names. */
const TEST_DIRECTORY = /^fs-sandbox-(?:e2e|served-tmp)-[A-Za-z0-9]{6}$/;

async function entriesOwnedBy(dir: string, uid: number): Promise<string[]> {
  const owned: string[] = [];
  for (const name of (await readdir(dir)).filter((entry) => !TEST_DIRECTORY.test(entry))) {
    try {
      if ((await stat(join(dir, name))).uid === uid) owned.push(name);
    } catch {
      // removed meanwhile
    }
  }
  return owned.sort();
}
