import type { LaunchSpec } from '../backends/backend.js';
import { launchCommand } from '../backends/launch-command.js';

/**
 * Everything that shapes a helper's sandbox: the launcher and its whole argv (mounts, masks, cwd,
 * node's and the helper's own arguments, the mount points the helper checks), its system call
 * filter, the roots whose
 * identity a warm helper is checked against, and the environment. Two requests share warm helpers
 * only when this is byte-for-byte equal; a request's launch is the one the host's current answers
 * build (reused only while they are unchanged, see SandboxRunner.prepare), so a changed policy, a
 * new deny path or a re-pointed symlink gives a different key.
 */
export function launchKey(launch: LaunchSpec): string {
  // A reused launch is the same frozen object request after request (SandboxRunner.prepare).
  const known = keys.get(launch);
  if (known !== undefined) return known;
  const { file, args } = launchCommand(launch);
  const env = Object.keys(launch.env)
    .sort()
    .map((name) => [name, launch.env[name]]);
  // The filter's bytes are not in the argv (bwrap reads them from a descriptor), but shape the sandbox.
  const key = JSON.stringify([
    launch.backend,
    file,
    args,
    launch.boundRoots,
    env,
    launch.inputs?.seccomp ?? null,
  ]);
  if (Object.isFrozen(launch)) keys.set(launch, key);
  return key;
}

const keys = new WeakMap<LaunchSpec, string>();
