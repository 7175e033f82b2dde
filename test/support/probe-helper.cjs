// A stand-in for the helper bundle (selected with FS_SANDBOX_HELPER_BUNDLE) that the e2e suites run
// under the production bwrap command: it reports what a compromised helper could see and do, and
// answers in the helper protocol so the broker relays the report as an fs/getMetadata result.
// With a path ending in "/sleep" it never answers (a stuck helper for the kill tests).
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');

function attempt(file, args) {
  const result = spawnSync(file, args, { encoding: 'utf8', timeout: 5000 });
  return { command: [file, ...args].join(' '), status: result.status, stderr: (result.stderr || '').trim() };
}

function readOrError(path) {
  try {
    return { ok: true, text: fs.readFileSync(path, 'latin1') };
  } catch (error) {
    return { ok: false, error: error.code };
  }
}

function writeOrError(path) {
  try {
    fs.writeFileSync(path, 'probe was here\n');
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error.code };
  }
}

const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf8');
  const request = JSON.parse(text.slice(0, text.indexOf('\n')));
  const target = request.params.path;
  // The broker's self-check of a Bun helper runs it outside any sandbox: that run must do nothing.
  if (request.sandboxed !== true) {
    process.stdout.write(
      `${JSON.stringify({ status: 'ok', payload: { operation: 'fs/getMetadata', response: {} } })}\n`,
    );
    return;
  }
  if (target.endsWith('/sleep')) {
    setInterval(() => {}, 60_000);
    return;
  }
  const ws = target;
  const report = {
    uid: process.getuid(),
    env: process.env,
    execArgv: process.execArgv,
    selfEnviron: readOrError('/proc/self/environ'),
    initEnviron: readOrError('/proc/1/environ'),
    capabilities: (readOrError('/proc/self/status').text || '')
      .split('\n')
      .filter((line) => line.startsWith('Cap')),
    interfaces: Object.keys(os.networkInterfaces()),
    processes: fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)),
    mounts: [
      attempt('mount', ['-o', 'remount,rw', '/']),
      attempt('mount', ['-o', 'remount,rw', `${ws}/.git`]),
      attempt('umount', [`${ws}/.git`]),
      attempt('umount', ['-l', `${ws}/denied-dir`]),
      attempt('mount', ['-t', 'tmpfs', 'none', `${ws}/sub`]),
      attempt('unshare', ['--user', '--map-root-user', '--mount', 'true']),
    ],
    afterMountAttempts: {
      gitHeadWrite: writeOrError(`${ws}/.git/HEAD`),
      deniedRead: readOrError(`${ws}/denied-dir/secret2.txt`),
      subListing: fs.readdirSync(`${ws}/sub`),
      outsideWrite: writeOrError(`${ws}/../outside/planted.txt`),
      rootWrite: writeOrError('/planted.txt'),
    },
  };
  const reply = { status: 'ok', payload: { operation: 'fs/getMetadata', response: report } };
  process.stdout.write(`${JSON.stringify(reply)}\n`);
});
