/** The spawner's first argument: `ps` shows `node -e … fs-sandbox-pool-spawner <broker pid>`. */
export const SPAWNER_NAME = 'fs-sandbox-pool-spawner';

/** How often the spawner checks that its broker is still there (see the end of the program). */
const SPAWNER_CHECK_MS = 100;

/** The descriptor of the spawner's channel to the broker (its stdio array puts 'ipc' there). */
export const SPAWNER_CHANNEL_FD = 3;

/**
 * The spawner's program, run as `node -e`: node's builtins only, so it needs no file of its own in
 * the library, the bundled CLI or the sources the tests run, and starts in node's own time.
 *
 * It says `{ready: true}` once it listens. Per message `{id, file, args, env, stdio, seccomp}` it spawns the launch (detached, cwd `/`) with
 * each `stdio` slot being 'pipe', 'ignore' or 'null' (its own /dev/null, which the broker's
 * covering of inherited descriptors maps to), writes the filter program into the slot
 * `seccomp.fd`, and hands the broker the child's stdout, stderr and stdin (`{id, pid, stream}` with
 * the pipe as the message's handle, which node closes on this side once sent). It then reports
 * `{id, exit: [code, signal]}`, or `{id, error}` for a spawn that failed.
 *
 * Its channel is a descriptor without close-on-exec, and a way to have launches spawned outside
 * any sandbox: it is covered with /dev/null in every child, whatever the slot there said. When the
 * broker goes (its end of the channel closes: close(), exit, or SIGKILL), it kills every process
 * group it started and exits; bwrap's --die-with-parent then also holds for the spawner.
 */
export const SPAWNER_PROGRAM = `'use strict';
const { spawn } = require('node:child_process');
const { openSync } = require('node:fs');
const CHANNEL = ${SPAWNER_CHANNEL_FD};
const devNull = openSync('/dev/null', 'r');
const children = new Map();
const send = (message, handle) => {
  if (process.connected) process.send(message, handle, () => {});
};
process.on('message', (launch) => {
  const stdio = launch.stdio.map((slot) => (slot === 'null' ? devNull : slot));
  while (stdio.length <= CHANNEL) stdio.push('ignore');
  if (stdio[CHANNEL] === 'ignore') stdio[CHANNEL] = devNull;
  let child;
  try {
    child = spawn(launch.file, launch.args, { env: launch.env, cwd: '/', detached: true, stdio });
  } catch (error) {
    send({ id: launch.id, error: String(error && error.message) });
    return;
  }
  child.on('error', (error) => {
    if (child.pid === undefined) send({ id: launch.id, error: String(error && error.message) });
  });
  if (child.pid === undefined) return;
  children.set(launch.id, child);
  child.on('exit', (code, signal) => {
    children.delete(launch.id);
    send({ id: launch.id, exit: [code, signal] });
  });
  if (launch.seccomp !== null) {
    const pipe = child.stdio[launch.seccomp.fd];
    pipe.on('error', () => {});
    pipe.end(Buffer.from(launch.seccomp.program, 'base64'));
  }
  // stdin last: node sends a descriptor once the previous one is acknowledged, and closes this
  // side's copy then. This side reads what arrives on stdout until it is closed, so the broker gets
  // to write a request only when no reply can be read here any more.
  for (const stream of [1, 2, 0]) {
    const handle = child.stdio[stream];
    if (handle) send({ id: launch.id, pid: child.pid, stream }, handle);
  }
});
send({ ready: true });
const end = () => {
  for (const child of children.values()) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  process.exit(0);
};
process.on('disconnect', end);
// node emits no 'disconnect' when the channel closes while a descriptor it sent still awaits the
// broker's acknowledgement (a broker gone mid-refill): only 'connected' turns false then.
setInterval(() => {
  if (!process.connected) end();
}, ${SPAWNER_CHECK_MS});
`;
