import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CommandProcess,
  chooseLinuxBackend,
  DEFAULT_MAX_PROCESSES,
  describeProcessBound,
  HELPER_RUNTIME_ENV,
  LINUX_BACKEND_ENV,
  type LinuxBackendPreference,
  locateBwrap,
  probeBwrap,
  probeLandlock,
  processBoundMechanism,
  requestedLinuxBackend,
  resolveHelperRuntime,
} from '@fs-sandbox/broker/internal';
import { bunHelperPackage } from '@fs-sandbox/helper/bundle-path';
import {
  APP_SERVER_METHOD_TABLE,
  APP_SERVER_METHODS,
  currentHostOs,
  type HostOs,
  nativeToPathUri,
  notificationSchemasOf,
  type SandboxContextInput,
  workspaceWriteProfile,
} from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { addBackendOption } from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { describeError } from './json-output.js';
import { describePool } from './pool-flags.js';
import { formatTable } from './table.js';

/** WARN: sandboxed operations work, but not as well as they could here (the exit stays 0). */
type Status = 'ok' | 'WARN' | 'FAIL' | 'info';

interface Check {
  name: string;
  status: Status;
  detail: string;
  /** For a failure or a warning: what to run or set to fix it, printed on a `fix:` line under the row. */
  remedy?: string;
}

export const INSTALL_BWRAP =
  'apt-get install -y bubblewrap (Debian/Ubuntu; dnf install bubblewrap on Fedora)';
export const BWRAP_OVERRIDE_REMEDY =
  'or point FS_SANDBOX_BWRAP=/path/to/bwrap at a bwrap outside every writable root';

/**
 * `fs-sandbox doctor`: can this machine run sandboxed file operations? Every row is a real check
 * (the namespace row runs bwrap, the last row runs a sandboxed write and read through the broker);
 * exit 0 only when sandboxed operations work.
 */
export function registerDoctorCommand(program: Command, deps: CliDeps): void {
  addBackendOption(program.command('doctor'))
    .description('check that sandboxed operations can run here (exit 0 only if they can)')
    .action(async (flags: { backend?: LinuxBackendPreference }) => {
      // The sandboxed rows run under the backend asked for, as the other verbs would.
      const env =
        flags.backend === undefined ? deps.io.env : { ...deps.io.env, [LINUX_BACKEND_ENV]: flags.backend };
      const run: CliDeps = { ...deps, io: { ...deps.io, env } };
      const os = currentHostOs();
      const checks: Check[] = [
        { name: 'os', status: 'info', detail: `${os} (${process.platform} ${release()}, ${process.arch})` },
        { name: 'node', status: 'info', detail: `${await realpath(process.execPath)} ${process.version}` },
        ...(await helperRuntimeChecks(os, run)),
        ...(await backendChecks(os, run, flags.backend)),
      ];
      checks.push(...(await sandboxedOperationChecks(os, run)));
      checks.push(
        appServerSurfaceCheck(
          os,
          await resolveHelperRuntime(os, run.io.env).then(
            (runtime) => runtime.executable.kind,
            () => null,
          ),
        ),
      );
      if (os === 'linux' && !checks.some((check) => check.status === 'FAIL')) {
        checks.push(await processBoundCheck(os, run));
      }
      deps.io.stdout.write(`${formatChecks(checks)}\n`);
      if (checks.some((check) => check.status === 'FAIL')) deps.setExitCode(EXIT.failed);
    });
}

/** The report: one row a check, a failure's remedy on a `fix:` row under it; fits 100 columns. */
export function formatChecks(checks: readonly Check[]): string {
  return formatTable(
    ['check', 'status', 'detail'],
    checks.flatMap((check) => [
      [check.name, check.status, check.detail],
      ...(check.status !== 'ok' && check.remedy !== undefined ? [['', '', `fix: ${check.remedy}`]] : []),
    ]),
  );
}

/** Reads one sysctl under /proc/sys (null when the kernel has no such knob). */
export type ReadSysctl = (name: string) => Promise<string | null>;

const readSysctl: ReadSysctl = async (name) => {
  try {
    return (await readFile(`/proc/sys/${name.replaceAll('.', '/')}`, 'utf8')).trim();
  } catch {
    return null;
  }
};

/**
 * What to change when bwrap cannot create a user namespace: the kernel knob that forbids it on this
 * machine (Debian's `unprivileged_userns_clone`, Ubuntu's AppArmor restriction, a zero
 * `max_user_namespaces`), or, when none does, the container that does.
 */
export async function namespaceRemedy(read: ReadSysctl = readSysctl): Promise<string> {
  const fixes: string[] = [];
  if ((await read('kernel.unprivileged_userns_clone')) === '0') {
    fixes.push('sysctl -w kernel.unprivileged_userns_clone=1');
  }
  if ((await read('kernel.apparmor_restrict_unprivileged_userns')) === '1') {
    fixes.push('sysctl -w kernel.apparmor_restrict_unprivileged_userns=0');
  }
  if ((await read('user.max_user_namespaces')) === '0')
    fixes.push('sysctl -w user.max_user_namespaces=15000');
  if (fixes.length > 0) {
    return `${fixes.join(' and ')} (as root; persist it in /etc/sysctl.d/), ${BWRAP_OVERRIDE_REMEDY}`;
  }
  return (
    'no kernel knob forbids user namespaces here, so a container or seccomp policy does: allow them ' +
    '(e.g. docker run --security-opt seccomp=unconfined, or --privileged), or use a setuid bwrap via ' +
    'FS_SANDBOX_BWRAP=/path/to/bwrap'
  );
}

/**
 * The V2 surface `fs-sandbox app-server` serves here, from its method table: the methods, the
 * notifications they send, and what this host lacks of it (watches are Linux only; a terminal for
 * `tty: true` is allocated by the Bun helper inside the sandbox, so the node helper refuses it).
 */
export function appServerSurfaceCheck(os: HostOs, helperKind: string | null): Check {
  const notifications = [...notificationSchemasOf(APP_SERVER_METHOD_TABLE).keys()];
  const limits = [
    os === 'linux' ? null : 'fs/watch is Linux only here',
    helperKind === 'bun'
      ? 'tty: true runs on a terminal inside the sandbox'
      : 'tty: true is refused (no Bun helper)',
  ].filter((text) => text !== null);
  return {
    name: 'app-server (V2)',
    status: 'info',
    detail: `${APP_SERVER_METHODS.join(', ')}; notifications ${notifications.join(', ')}; ${limits.join('; ')}`,
  };
}

/**
 * Which runtime the helpers run under and why (FS_SANDBOX_HELPER_RUNTIME, Bun's self-check), and its
 * bundle. node where the Bun helper should have run is a warning: it works, every helper starts
 * slower, and an install that left out the platform package (or a binary that cannot execute)
 * would otherwise go unnoticed.
 */
async function helperRuntimeChecks(os: HostOs, deps: CliDeps): Promise<Check[]> {
  try {
    const runtime = await resolveHelperRuntime(os, deps.io.env);
    const { kind, path } = runtime.executable;
    const detail = `${kind} ${path} (${runtime.choice.reason})`;
    return [
      runtime.choice.bunUnusable === undefined
        ? { name: 'helper runtime', status: 'ok', detail }
        : {
            name: 'helper runtime',
            status: 'WARN',
            detail,
            remedy: `install or reinstall ${bunHelperPackage()} (an optional dependency of @fs-sandbox/helper, left out by --omit=optional; its bin/helper-bun must be executable), or ${HELPER_RUNTIME_ENV}=node to choose node`,
          },
      { name: 'helper bundle', status: 'ok', detail: runtime.helperBundle },
    ];
  } catch (error) {
    return [
      {
        name: 'helper runtime',
        status: 'FAIL',
        detail: describeError(error),
        remedy: `pnpm install && pnpm run build (the helper bundle is built, not checked in), or ${HELPER_RUNTIME_ENV}=node`,
      },
    ];
  }
}

/**
 * The Linux backend in force and why (linux-backend-choice.ts), then what each candidate can do
 * here: bwrap's namespaces and the kernel's Landlock ABI. bwrap's rows fail only when no backend
 * is usable (Landlock standing in is said, not failed).
 */
async function backendChecks(
  os: HostOs,
  deps: CliDeps,
  preference?: LinuxBackendPreference,
): Promise<Check[]> {
  if (os !== 'linux') return [{ name: 'backend', status: 'info', detail: `see the sandboxed operation row` }];
  let choice: Check;
  let landlockInForce = false;
  try {
    const chosen = await chooseLinuxBackend(requestedLinuxBackend(preference, deps.io.env), deps.io.env);
    landlockInForce = chosen.backend === 'landlock';
    choice = { name: 'backend', status: 'ok', detail: `${chosen.backend}: ${chosen.reason}` };
  } catch (error) {
    choice = {
      name: 'backend',
      status: 'FAIL',
      detail: describeError(error),
      remedy: `${INSTALL_BWRAP}, ${BWRAP_OVERRIDE_REMEDY}; or a kernel with Landlock ABI 6 (Linux 6.12) for the Landlock backend`,
    };
  }
  const bwrapStatus = (usable: boolean): Status => (usable ? 'ok' : landlockInForce ? 'info' : 'FAIL');
  const landlock = await probeLandlock();
  const rows: Check[] = [choice];
  let bwrap: string;
  try {
    bwrap = await locateBwrap(deps.io.env);
  } catch (error) {
    rows.push({
      name: 'bwrap',
      status: bwrapStatus(false),
      detail: describeError(error),
      remedy: `${INSTALL_BWRAP}, ${BWRAP_OVERRIDE_REMEDY}`,
    });
    rows.push({ name: 'landlock', status: 'info', detail: landlock.detail });
    return rows;
  }
  const probe = await probeBwrap(bwrap, await realpath(process.execPath));
  rows.push(
    { name: 'bwrap', status: 'ok', detail: `${bwrap} (${probe.version ?? 'version unknown'})` },
    {
      name: 'user namespaces',
      status: bwrapStatus(probe.namespaces.usable),
      detail: probe.namespaces.detail,
      ...(probe.namespaces.usable ? {} : { remedy: await namespaceRemedy() }),
    },
    { name: 'landlock', status: 'info', detail: landlock.detail },
  );
  return rows;
}

/** The bound the doctor's own command runs under, and how many processes it tries to hold. */
const PROBE_BOUND = 8;
const PROBE_PROCESSES = 16;

/**
 * Which mechanism bounds a command's processes here (runner/process-bound.ts), proved by a real
 * command under a small bound that tries to start twice as many: its shell must be refused a fork.
 */
async function processBoundCheck(os: HostOs, deps: CliDeps): Promise<Check> {
  const name = 'process bound';
  const mechanism = processBoundMechanism();
  const detail = describeProcessBound(mechanism, DEFAULT_MAX_PROCESSES);
  if (mechanism.kind === 'none') return { name, status: 'info', detail };
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-doctor-')));
  const broker = deps.createBroker({ env: deps.io.env, pool: false, maxProcesses: PROBE_BOUND });
  try {
    const root = nativeToPathUri(workspace, os);
    const launch = await broker.prepareCommand(
      { permissions: workspaceWriteProfile({ writableRoots: [root] }), cwd: root },
      {
        argv: ['/bin/sh', '-c', `i=0; while [ $i -lt ${PROBE_PROCESSES} ]; do sleep 2 & i=$((i+1)); done`],
        cwd: workspace,
        env: { PATH: '/usr/bin:/bin' },
      },
    );
    let stderr = '';
    const exitCode = await new Promise<number>((resolve, reject) => {
      CommandProcess.start(launch, 'ignore', {
        output: (stream, chunk) => {
          if (stream === 'stderr') stderr += chunk.toString();
        },
        exit: resolve,
        closed: () => {},
      }).catch(reject);
    });
    const held = exitCode !== 0 && /fork/i.test(stderr);
    return held
      ? {
          name,
          status: 'ok',
          detail: `${detail}; a command under a bound of ${PROBE_BOUND} was refused its fork`,
        }
      : {
          name,
          status: 'FAIL',
          detail: `${detail}, yet a command under a bound of ${PROBE_BOUND} started ${PROBE_PROCESSES} processes`,
          remedy: 'run with --max-processes none, or report it: the mechanism above did not hold',
        };
  } catch (error) {
    return { name, status: 'FAIL', detail: `${detail}; the check failed: ${describeError(error)}` };
  } finally {
    await broker.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

/** Time for the spares spawned after the first call to finish starting (a node start is ~0.1 s). */
const WARM_UP_MS = 500;

/**
 * A real sandboxed write and read-back in a temporary workspace, then a read through the warm pool
 * (with the pool's default settings, as `serve` and the library use it).
 */
async function sandboxedOperationChecks(os: HostOs, deps: CliDeps): Promise<Check[]> {
  const name = 'sandboxed operation';
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-doctor-')));
  const broker = deps.createBroker({ env: deps.io.env, pool: {} });
  try {
    const root = nativeToPathUri(workspace, os);
    const sandbox = {
      permissions: workspaceWriteProfile({ writableRoots: [root] }),
      cwd: root,
      workspaceRoots: [root],
      windowsSandboxLevel: os === 'windows' ? 'restricted-token' : 'disabled',
    } satisfies SandboxContextInput;
    const path = nativeToPathUri(join(workspace, 'probe.txt'), os);
    const started = performance.now();
    const { info } = await broker.callWithInfo('fs/writeFile', { path, dataBase64: 'b2s=', sandbox });
    const coldMs = Math.round(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
    const warmStarted = performance.now();
    const read = await broker.call('fs/readFile', { path, sandbox });
    const warmMs = Math.round(performance.now() - warmStarted);
    if (!info.sandboxed || Buffer.from(read.dataBase64).toString() !== 'ok') {
      return [{ name, status: 'FAIL', detail: 'the write did not run sandboxed or did not read back' }];
    }
    const pool = broker.poolStats();
    return [
      { name, status: 'ok', detail: `write + read under ${info.backend} (cold write ${coldMs} ms)` },
      {
        name: 'warm pool',
        // A read that found no warm helper is no failure (the machine may be slow), but worth a look.
        status: pool !== null && pool.hits > 0 ? 'ok' : 'info',
        detail:
          pool === null ? 'off' : `warm read ${warmMs} ms vs cold write ${coldMs} ms; ${describePool(pool)}`,
      },
    ];
  } catch (error) {
    return [
      {
        name,
        status: 'FAIL',
        detail: describeError(error),
        remedy:
          os === 'linux'
            ? `fix the failing rows above first; ${INSTALL_BWRAP}, ${BWRAP_OVERRIDE_REMEDY}`
            : 'fix the failing rows above first',
      },
    ];
  } finally {
    await broker.close();
    await rm(workspace, { recursive: true, force: true });
  }
}
