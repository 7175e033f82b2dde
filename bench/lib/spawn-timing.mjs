import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/**
 * Spawns a launch the way the broker spawns a helper (detached, piped stdio, cwd /, the launch's
 * environment), writes `input`, and resolves with the milliseconds until the process has exited and
 * its output closed, and the number of stdout bytes.
 */
export function timeLaunch(launch, input = '') {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(launch.file, launch.args, {
      env: launch.env,
      cwd: '/',
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${launch.file} exited ${code}: ${stderr}`));
      else resolve({ ms: performance.now() - started, bytes });
    });
    child.stdin.end(input);
  });
}

/**
 * The floor of a sandboxed call: bwrap with exactly the helper's mounts running node on an empty
 * script. Derived from the real launch: the helper bundle (its bind and the program argument) is
 * replaced by the empty script bound the same way, and the helper's own arguments are dropped.
 */
export function floorLaunch(launch, helperBundle, emptyScript) {
  const separator = launch.args.lastIndexOf('--');
  if (separator === -1 || launch.args[separator + 2] !== helperBundle) {
    throw new Error('the launch does not end in `-- node <helper bundle>`');
  }
  const args = launch.args.slice(0, separator + 2).map((arg) => (arg === helperBundle ? emptyScript : arg));
  args.push(emptyScript);
  return { ...launch, args };
}
