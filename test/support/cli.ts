import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { CLI_BIN, REPO } from './build.js';

let binDir: string | undefined;

/**
 * A directory holding only `fs-sandbox`, a link to this repository's CLI, inside the checkout
 * (`test/.cli-bin`, ignored by git): tests that run `fs-sandbox` as a person's shell would (from
 * PATH) put it first, since `/usr/local/bin/fs-sandbox` is shared by every clone on the machine
 * and another clone's set-up re-points it at its own build. In the checkout rather than a
 * temporary directory: vitest ends its workers without an exit event, and one directory per
 * worker was left in /tmp for every run. Made by whichever worker comes first; the link is
 * renamed into place, so a worker never sees it half made.
 */
export function cliBinDir(): string {
  if (binDir !== undefined) return binDir;
  const dir = join(REPO, 'test', '.cli-bin');
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755); // the unprivileged user (nobody) runs it too
  const link = join(dir, 'fs-sandbox');
  let current: string | null = null;
  try {
    current = readlinkSync(link);
  } catch {
    // Not made yet.
  }
  if (current !== CLI_BIN) {
    const made = `${link}.${process.pid}.${threadId}`;
    rmSync(made, { force: true });
    symlinkSync(CLI_BIN, made);
    renameSync(made, link);
  }
  binDir = dir;
  return dir;
}

/** A person's PATH: this repository's `fs-sandbox` (see `cliBinDir`), then the system's programs. */
export function personPath(): string {
  return `${cliBinDir()}:/usr/bin:/bin`;
}

/** Who runs the CLI: the test's own root, or an unprivileged user through setpriv. */
export type CliUser = 'root' | 'nobody';
export const NOBODY_UID = 65534;
export const USERS: readonly CliUser[] = ['root', 'nobody'];

/** The attack suites run twice: with the broker's pre-check, and without it (only the kernel and the helper's own checks). */
export const PRECHECK_MODES = [
  ['pre-check on', true],
  ['pre-check off (kernel only)', false],
] as const;

/**
 * Set (to 1) by the projects that run suites a second time for what changes there (`e2e-node`: the
 * helper's runtime, `e2e-landlock`: the backend; test/support/suite-plan.ts).
 */
export const SECOND_LEG = process.env.FS_SANDBOX_TEST_SECOND_LEG === '1';

/**
 * The pre-check modes of an attack matrix in this run: both in the e2e project, the pre-check-off
 * half only in a second leg. With the pre-check on, a request that reaches the helper reaches it
 * with the pre-check off too (the same request, the same runtime and backend), and what refuses the
 * rest is the broker's pre-check: the same code on the same paths in every leg, checked once.
 */
export const MATRIX_PRECHECK_MODES = SECOND_LEG
  ? PRECHECK_MODES.filter(([, precheck]) => !precheck)
  : PRECHECK_MODES;

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CliOptions {
  user: CliUser;
  /** The CLI's whole environment (nothing is inherited from the test process). */
  env: Record<string, string>;
  input?: string;
  /** Kill the CLI after this long (a hang is a failure, not a slow pass). */
  timeoutMs?: number;
  /** Descriptors the CLI inherits without close-on-exec, each opened read-only on a path. */
  descriptors?: Readonly<Record<number, string>>;
  /** The directory the CLI starts in, as a person's shell would be (default: the repository). */
  cwd?: string;
  /** false: the CLI starts where no user namespace can be made (default: as NO_USER_NAMESPACES says). */
  userNamespaces?: boolean;
}

/**
 * Set (to 1) by the `e2e-landlock` project: every CLI then starts where no user namespace can be
 * made, as in a container whose seccomp profile refuses them, so bwrap cannot start and `auto`
 * takes the Landlock backend.
 */
export const NO_USER_NAMESPACES = process.env.FS_SANDBOX_TEST_NO_USERNS === '1';

/**
 * The CLI's command line without user namespaces: a user namespace of its own (the test user as
 * its root) whose limit of nested user namespaces is set to 0 before the CLI starts in it.
 */
export function withoutUserNamespaces(command: readonly string[]): string[] {
  return [
    'unshare',
    '--user',
    '--map-root-user',
    'sh',
    '-c',
    'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"',
    'sh',
    ...command,
  ];
}

/** The command line that starts the CLI as `user` (setpriv drops to nobody with no groups). */
export function cliCommand(
  user: CliUser,
  args: readonly string[],
  userNamespaces = !NO_USER_NAMESPACES,
): { file: string; args: string[] } {
  const plain = [process.execPath, CLI_BIN, ...args];
  const node = userNamespaces ? plain : withoutUserNamespaces(plain);
  if (user === 'root') return { file: node[0] as string, args: node.slice(1) };
  return {
    file: 'setpriv',
    args: [`--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups', ...node],
  };
}

/**
 * `command` started by a shell that first opens each descriptor on its path (`exec 200<path`),
 * the way a parent that does not set close-on-exec leaves them to everything it starts.
 */
export function withInheritedDescriptors(
  command: { file: string; args: string[] },
  descriptors: Readonly<Record<number, string>>,
): { file: string; args: string[] } {
  const entries = Object.entries(descriptors);
  const opens = entries.map(([fd], i) => `exec ${Number(fd)}<"$${i + 1}"`).join('; ');
  return {
    // --norc: bash runs ~/.bashrc when its stdin is a socket (as Node's pipes are), thinking rshd started it.
    file: 'bash',
    args: [
      '--norc',
      '-c',
      `${opens}; shift ${entries.length}; exec "$@"`,
      'bash',
      ...entries.map(([, path]) => path),
      command.file,
      ...command.args,
    ],
  };
}

/**
 * The e2e suites run under both helper runtimes: FS_SANDBOX_HELPER_RUNTIME of the test process
 * (the CI's node leg sets it to `node`) reaches every CLI they start, unless a test sets its own.
 */
export function withHelperRuntime(env: Record<string, string>): Record<string, string> {
  const chosen = process.env.FS_SANDBOX_HELPER_RUNTIME;
  if (chosen === undefined || 'FS_SANDBOX_HELPER_RUNTIME' in env) return env;
  return { ...env, FS_SANDBOX_HELPER_RUNTIME: chosen };
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliRun> {
  const plain = cliCommand(options.user, args, options.userNamespaces);
  const command = options.descriptors ? withInheritedDescriptors(plain, options.descriptors) : plain;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, command.args, {
      cwd: options.cwd ?? REPO,
      env: withHelperRuntime(options.env),
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** `fs-sandbox call` with params as an object; returns the parsed stdout line and the exit code. */
export async function callMethod(
  method: string,
  params: unknown,
  options: CliOptions & { precheck?: boolean; requireSandbox?: boolean; untrusted?: boolean },
): Promise<{ code: number | null; result?: Record<string, unknown>; error?: WireErrorShape; run: CliRun }> {
  const flags = [
    ...(options.precheck === false ? ['--no-precheck'] : []),
    ...(options.requireSandbox === true ? ['--require-sandbox'] : []),
    ...(options.untrusted === true ? ['--untrusted'] : []),
  ];
  const json = JSON.stringify(params);
  // One argv element is limited to 128 KiB by the kernel; larger params go through stdin (`-`).
  const run =
    json.length > 64 * 1024
      ? await runCli(['call', ...flags, method, '-'], { ...options, input: json })
      : await runCli(['call', ...flags, method, json], options);
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(run.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`fs-sandbox call printed no JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
  if (run.code === 0) return { code: run.code, result: parsed, run };
  return { code: run.code, error: parsed.error as WireErrorShape, run };
}

export interface WireErrorShape {
  code: number;
  message: string;
  data: { errorKind: string };
}
