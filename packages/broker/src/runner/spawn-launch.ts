import { type ChildProcess, spawn } from 'node:child_process';
import type { LaunchSpec } from '../backends/backend.js';
import { launchCommand } from '../backends/launch-command.js';
import { coveredStdio, feedLaunchInputs } from './inherited-masks.js';

/**
 * Starts a helper launch: its argv, its environment, stdin and stdout as pipes, and its inputs (the
 * seccomp filter and the masked kernel files' empty contents) at the descriptors its argv names —
 * without them bwrap cannot read what it loads and the launch fails before the program runs.
 * Detached, so one signal to the process group ends the whole tree. The broker's helpers and the
 * bench's warm floor (a program in the helper's place) start the same way.
 */
export function spawnLaunch(launch: LaunchSpec, stderr: 'pipe' | 'ignore' = 'pipe'): ChildProcess {
  const { file, args } = launchCommand(launch);
  const child = spawn(file, args, {
    env: launch.env,
    cwd: '/',
    detached: true,
    stdio: coveredStdio(['pipe', 'pipe', stderr], launch.inputs),
    windowsHide: true,
  });
  feedLaunchInputs(child, launch.inputs);
  return child;
}
