import type { LaunchSpec } from '../backends/backend.js';

/**
 * Everything that shapes a helper's sandbox: the launcher, its whole argv (mounts, masks, cwd, the
 * helper's own arguments) and the environment. Two requests share warm helpers only when this is
 * byte-for-byte equal; the launch is rebuilt from fresh host facts on every request, so a changed
 * policy, a new deny path or a re-pointed symlink gives a different key.
 */
export function launchKey(launch: LaunchSpec): string {
  const env = Object.keys(launch.env)
    .sort()
    .map((name) => [name, launch.env[name]]);
  return JSON.stringify([launch.backend, launch.file, launch.args, env]);
}
