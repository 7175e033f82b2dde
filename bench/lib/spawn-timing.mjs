import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Spawns a launch the way the broker spawns a helper (detached, piped stdio, cwd /, the launch's
 * environment, and its inputs: the seccomp filter into a pipe at `inputs.firstFd`, /dev/null for
 * each empty input after it), writes `input`, and resolves with the milliseconds until the process
 * has exited and its output closed, and the number of stdout bytes.
 */
export function timeLaunch(launch, input = '') {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const inputs = launch.inputs;
    const stdio = ['pipe', 'pipe', 'pipe'];
    if (inputs !== undefined) {
      if (inputs.firstFd !== stdio.length) throw new Error(`launch inputs at fd ${inputs.firstFd}`);
      if (inputs.seccomp !== null) stdio.push('pipe');
      for (let i = 0; i < inputs.emptyInputs; i += 1) stdio.push(devNull());
    }
    const child = spawn(launch.file, launch.args, {
      env: launch.env,
      cwd: '/',
      detached: true,
      stdio,
    });
    if (inputs?.seccomp != null) {
      child.stdio[inputs.firstFd].on('error', () => {});
      child.stdio[inputs.firstFd].end(Buffer.from(inputs.seccomp, 'base64'));
    }
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
    // A launch that fails at once closes its stdin first: its exit says why.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/**
 * The floor of a sandboxed call: the real launch with an empty script as the helper, so bwrap makes
 * exactly the helper's mounts (the empty script is bound where the helper bundle was) and node runs
 * nothing. The helper's own arguments, the mount check among them, are dropped with it.
 */
export function floorLaunch(launch, helperBundle, emptyScript) {
  // The empty script takes the bundle's bind: a launch of another bundle would keep that one's.
  if (launch.helper !== helperBundle)
    throw new Error(`the launch runs ${launch.helper}, not ${helperBundle}`);
  return {
    ...launch,
    sandboxArgs: launch.sandboxArgs.map((arg) => (arg === launch.helper ? emptyScript : arg)),
    helper: emptyScript,
    helperArgs: [],
    mountPoints: [],
  };
}

let devNullFd = null;
/** One descriptor on /dev/null, kept open for every spawn (a launch's empty inputs). */
function devNull() {
  devNullFd ??= openSync('/dev/null', 'r');
  return devNullFd;
}
