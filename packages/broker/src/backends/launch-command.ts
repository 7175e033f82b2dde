import { EXPECT_MOUNTS_FLAG } from '@fs-sandbox/helper';
import type { CommandLaunchSpec, LaunchSpec } from './backend.js';

/** A launch as the OS takes it: one program and its argv. */
export interface LaunchCommand {
  file: string;
  args: string[];
}

/**
 * The one place a launch's parts become an argv: what is spawned, what the pool keys on, what the
 * Windows command-line bound is checked against and what `fs-sandbox explain` shows are therefore
 * the same words in the same order. The helper is told what was mounted so that, if it waited
 * warm, it can tell that a mount was detached under it (the host replaced the path) before acting.
 */
export function launchCommand(launch: LaunchSpec): LaunchCommand {
  const expectMounts = launch.mountPoints.length === 0 ? [] : [EXPECT_MOUNTS_FLAG, ...launch.mountPoints];
  return {
    file: launch.sandboxProgram,
    args: [
      ...launch.sandboxArgs,
      launch.runtime,
      ...launch.runtimeArgs,
      ...(launch.helper === null ? [] : [launch.helper]),
      ...expectMounts,
      ...launch.helperArgs,
    ],
  };
}

/** A command's launch as the OS takes it: the sandbox program then the user's argv, or the argv alone. */
export function commandLaunchCommand(launch: CommandLaunchSpec): LaunchCommand {
  const [program, ...args] = launch.argv as [string, ...string[]];
  if (launch.sandboxProgram === null) return { file: program, args };
  return { file: launch.sandboxProgram, args: [...launch.sandboxArgs, program, ...args] };
}
