import { FsError, joinPath, parentPath, pathStartsWith, samePath } from '@fs-sandbox/policy';
import type { HelperRuntime, LaunchSpec } from '../backend.js';
import { launchCommand } from '../launch-command.js';
import { windowsCommandLine } from './windows-command-line.js';
import { type AclEdit, MAX_COMMAND_LINE_CHARS, type WindowsLaunchPlan } from './windows-launch-protocol.js';
import type { AcceptedWindowsPlan } from './windows-level.js';
import { assertPlainWindowsPlanPath } from './windows-path-guard.js';

/**
 * The write-restricted token plan for a sandbox plan (pure). Writes succeed only where an ACE grants
 * the per-run capability SID (the writable roots); read-only subpaths and existing protected
 * metadata directories get deny ACEs, and the roots and the directories above protected paths may
 * not be deleted or renamed. Only a plan the level accepted (no read restrictions) gets here.
 */
export function buildWindowsLaunchPlanData(
  accepted: AcceptedWindowsPlan,
  runtime: HelperRuntime,
): WindowsLaunchPlan {
  const { plan, level } = accepted;
  assertPlainWindowsPlanPath(runtime.executable.path, 'the node executable');
  assertPlainWindowsPlanPath(runtime.helperBundle, 'the helper bundle');
  if (runtime.ripgrepPath !== null) assertPlainWindowsPlanPath(runtime.ripgrepPath, 'the ripgrep executable');
  if (plan.cwd !== null) assertPlainWindowsPlanPath(plan.cwd, 'the sandbox cwd');

  const grants: AclEdit[] = [];
  const denies: AclEdit[] = [];
  for (const writable of plan.writableRoots) {
    const root = writable.root;
    assertPlainWindowsPlanPath(root, 'writable root');
    grants.push({
      path: root,
      access: 'modify',
      inheritance: 'subtree',
      whenMissing: 'skip',
      reason: 'writable root',
    });
    const keptOut: AclEdit[] = [
      ...writable.readOnlySubpaths.map((path): AclEdit => {
        assertPlainWindowsPlanPath(path, 'read-only subpath');
        // An ACE lives on the object: a read-only path that does not exist yet could be created
        // writable, so the run is refused instead.
        return {
          path,
          access: 'write',
          inheritance: 'subtree',
          whenMissing: 'refuse',
          reason: 'read-only subpath',
        };
      }),
      ...writable.protectedNames.map(
        (name): AclEdit => ({
          path: joinPath('windows', root, name),
          access: 'write',
          inheritance: 'subtree',
          whenMissing: 'skip',
          reason: `protected metadata ${name}`,
        }),
      ),
    ];
    denies.push(...keptOut);
    // Renaming the root, or a directory above a kept-out path, would move the protection away
    // from the path the policy names.
    for (const dir of boundaryDirectories(
      root,
      keptOut.map((edit) => edit.path),
    )) {
      denies.push({
        path: dir,
        access: 'delete',
        inheritance: 'none',
        whenMissing: 'skip',
        reason: 'sandbox boundary',
      });
    }
  }

  return {
    version: 1,
    level,
    tokenFlags: ['DISABLE_MAX_PRIVILEGE', 'LUA_TOKEN', 'WRITE_RESTRICTED'],
    restrictingSids: ['per-run-capability', 'logon-session'],
    grants,
    denies,
    env: { ...runtime.env },
    cwd: plan.cwd,
    // The helper, plus the one ripgrep it starts for fs/search and fs/glob (inheriting the token).
    job: { killOnClose: true, activeProcessLimit: runtime.ripgrepPath === null ? 1 : 2 },
  };
}

/**
 * The launch: node runs the Windows launcher (outside the sandbox, as the broker's user), which
 * applies the ACEs, creates the restricted token and starts the helper's command line (the
 * arguments after the plan) with it. Nothing is mounted: the token's access checks happen on every
 * open, so a warm helper has no view to go stale.
 */
export function buildWindowsLaunchPlan(
  accepted: AcceptedWindowsPlan,
  runtime: HelperRuntime,
  launcherScript: string,
): LaunchSpec {
  const data = buildWindowsLaunchPlanData(accepted, runtime);
  const { env, ...shown } = data;
  const launch: LaunchSpec = {
    backend: 'restricted-token',
    sandboxProgram: runtime.executable.path,
    sandboxArgs: [launcherScript, JSON.stringify(data)],
    runtime: runtime.executable.path,
    runtimeKind: runtime.executable.kind,
    runtimeArgs: [],
    helper: runtime.helperBundle,
    helperArgs: [],
    mountPoints: [],
    boundRoots: [],
    env: { ...runtime.env },
    details: {
      ...shown,
      envNames: Object.keys(env).sort(),
      network: 'not blocked by the token: the helper opens no sockets',
    },
  };
  // The launcher's command line as node will quote it; bounded here so a large policy is refused
  // with a reason instead of failing inside CreateProcess.
  const command = launchCommand(launch);
  const commandLine = windowsCommandLine([command.file, ...command.args]).length;
  if (commandLine > MAX_COMMAND_LINE_CHARS) {
    throw new FsError(
      'sandbox_unavailable',
      `the restricted-token launch needs a ${commandLine}-character command line, more than Windows allows (${MAX_COMMAND_LINE_CHARS}); use fewer writable roots or read-only subpaths`,
    );
  }
  return launch;
}

/** The root and every directory strictly between it and a kept-out path inside it. */
function boundaryDirectories(root: string, keptOut: string[]): string[] {
  const between: string[] = [];
  for (const path of keptOut) {
    for (
      let dir = parentPath('windows', path);
      dir !== null && !samePath('windows', dir, root);
      dir = parentPath('windows', dir)
    ) {
      if (!pathStartsWith('windows', dir, root)) break;
      if (!between.some((known) => samePath('windows', known, dir as string))) between.push(dir);
    }
  }
  return [root, ...between.sort()];
}
