import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { FsError, isDeniedPath, type PathGuard, pathStartsWith, type SandboxPlan } from '@fs-sandbox/policy';

/** What execvp searches when the command's environment has no PATH (glibc's default). */
const EXECVP_DEFAULT_PATH = '/bin:/usr/bin';

/** Mounted by the sandbox itself rather than from the host, so the host cannot say what is there. */
const SANDBOX_MOUNTS = ['/dev', '/proc'];

/**
 * Refuses a command whose program the sandbox does not show, before anything is spawned: the
 * reference answers such a start with `spawnNotFound` (or `spawnPermissionDenied`), whereas bwrap
 * would start, fail its own execvp and exit 1, which a client reads as the command's failure.
 * The program is looked up as execvp will inside the sandbox (argv[0] with a slash against the cwd,
 * else each PATH entry of the command's environment) among the files the plan shows. This only
 * shapes the error: the sandbox still decides what the command may run. It refuses only when the
 * answer is certain, so a program on a mount the sandbox makes itself (/dev, /proc) is left to it.
 */
export function assertProgramShown(
  program: string,
  env: Record<string, string>,
  cwd: string,
  plan: SandboxPlan,
  guard: PathGuard,
): void {
  const candidates = program.includes('/')
    ? [absolute(cwd, program)]
    : (env.PATH ?? EXECVP_DEFAULT_PATH).split(':').map((dir) => absolute(absolute(cwd, dir), program));
  let foundNotExecutable = false;
  for (const candidate of candidates) {
    if (SANDBOX_MOUNTS.some((mount) => pathStartsWith('linux', candidate, mount))) return;
    const real = realOrNull(candidate);
    if (real === null || !shows(plan, guard, real)) continue;
    if (isExecutableFile(real)) return;
    foundNotExecutable = true;
  }
  if (foundNotExecutable) {
    throw new FsError('permission_denied', `${program}: not an executable file in the sandbox`, {
      kind: 'spawnPermissionDenied',
    });
  }
  const where = program.includes('/')
    ? 'the sandbox does not show it'
    : `not on the command's PATH (${env.PATH ?? EXECVP_DEFAULT_PATH}) among the files the sandbox shows`;
  throw new FsError('not_found', `${program}: no such program (${where})`, { kind: 'spawnNotFound' });
}

/**
 * Refuses a cwd that the sandbox shows by its spelling but not where it physically leads (a
 * symlink in a shown directory that points outside, or at a denied directory): bwrap would fail
 * its chdir and exit 1, which a client reads as the command's failure. A missing cwd is left to
 * the launch, which refuses it the same way.
 */
export function assertCwdShown(cwd: string, plan: SandboxPlan, guard: PathGuard): void {
  const real = realOrNull(cwd);
  if (real === null || shows(plan, guard, real)) return;
  throw new FsError(
    'permission_denied',
    `cwd ${cwd} is not a directory the sandbox shows (it leads to ${real})`,
    { kind: 'sandboxPreparation' },
  );
}

function absolute(base: string, path: string): string {
  if (path.startsWith('/')) return path;
  return path === '' ? base : `${base.replace(/\/$/, '')}/${path}`;
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** The plan's roots are compared by their real paths too: `/bin` is often a link to `/usr/bin`. */
function shows(plan: SandboxPlan, guard: PathGuard, real: string): boolean {
  if (isDeniedPath(guard, real, 'linux')) return false;
  if (plan.fullDiskRead) return true;
  return [...plan.readableRoots, ...plan.writableRoots.map((writable) => writable.root)].some(
    (root) => pathStartsWith('linux', real, realOrNull(root) ?? root) || pathStartsWith('linux', real, root),
  );
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
