import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { uri } from './fixture.mjs';
import { ServeClient } from './server-client.mjs';

/**
 * The reference Codex exec-server as the bench's peer: its binary (installed on demand into a cache
 * folder, never into the project), started as `codex exec-server --listen stdio`, and checked to
 * really sandbox a read before anything of it is measured.
 */

/** The version the tests compare against (test/package.json), so the bench measures the same one. */
export const CODEX_VERSION = JSON.parse(
  readFileSync(new URL('../../test/package.json', import.meta.url), 'utf8'),
).devDependencies['@openai/codex'];

/** The Rust target each @openai/codex platform package ships its binary under. */
const TRIPLES = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

export const cacheRoot = (env) => join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'fs-sandbox-bench');

/** The native binary of an @openai/codex installed under `prefix`, or null when there is none. */
export function binaryUnder(prefix) {
  const platform = `${process.platform}-${process.arch}`;
  const triple = TRIPLES[platform];
  if (triple === undefined) throw new Error(`@openai/codex ships no binary for ${platform}`);
  try {
    const codex = createRequire(join(prefix, 'package.json')).resolve('@openai/codex/package.json');
    const native = createRequire(codex).resolve(`@openai/codex-${platform}/package.json`);
    const binary = join(dirname(native), 'vendor', triple, 'bin', 'codex');
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

/**
 * The Codex binary to measure: FS_SANDBOX_BENCH_CODEX if set, else @openai/codex@CODEX_VERSION
 * from `<cache>/codex-<version>`, installed there with npm on first use.
 */
export function locateCodex(env = process.env, log = () => {}) {
  if (env.FS_SANDBOX_BENCH_CODEX) {
    if (!existsSync(env.FS_SANDBOX_BENCH_CODEX))
      throw new Error(`FS_SANDBOX_BENCH_CODEX names no file: ${env.FS_SANDBOX_BENCH_CODEX}`);
    return env.FS_SANDBOX_BENCH_CODEX;
  }
  const prefix = join(cacheRoot(env), `codex-${CODEX_VERSION}`);
  const cached = binaryUnder(prefix);
  if (cached !== null) return cached;
  log(`installing @openai/codex@${CODEX_VERSION} into ${prefix}`);
  mkdirSync(prefix, { recursive: true });
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `@openai/codex@${CODEX_VERSION}`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 },
  );
  const installed = binaryUnder(prefix);
  if (npm.status !== 0 || installed === null) {
    throw new Error(
      `could not install @openai/codex@${CODEX_VERSION} into ${prefix}: ${npm.error?.message ?? npm.stderr.trim()}`,
    );
  }
  return installed;
}

/** What the binary says it is (`codex-cli 0.171.0`). */
export function codexVersion(binary) {
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0)
    throw new Error(`${binary} --version failed: ${run.error?.message ?? run.stderr.trim()}`);
  const version = run.stdout.trim().split('\n')[0];
  if (!version.startsWith('codex-cli '))
    throw new Error(`${binary} is not the Codex CLI: it says ${version}`);
  return version;
}

/**
 * `codex exec-server --listen stdio`, handshaken. Its CODEX_HOME lies in the cache folder, not
 * under the temporary directory: codex refuses to create its arg0 helper aliases under $TMPDIR, and
 * with a system bwrap that has no --argv0 (0.8 here) every sandboxed call then fails. PATH is the
 * system's, so it sandboxes with the same /usr/bin/bwrap our helpers use (without a bwrap on PATH
 * it would fall back to the one it bundles).
 */
export async function startCodex(binary, env = process.env) {
  mkdirSync(cacheRoot(env), { recursive: true });
  const home = mkdtempSync(join(cacheRoot(env), 'codex-home-'));
  const child = spawn(binary, ['exec-server', '--listen', 'stdio'], {
    env: { PATH: '/usr/bin:/bin', CODEX_HOME: home },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.once('exit', () => rmSync(home, { recursive: true, force: true }));
  await new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new Error(`could not start ${binary}: ${error.message}`)));
  });
  const server = new ServeClient(null, [], child);
  await server.handshake();
  return server;
}

/**
 * Refuses to go on unless the reference enforces `sandbox`: a file outside its roots that it reads
 * without a sandbox must be refused with one, and a file inside must be read. So the bench never
 * compares our sandboxed reads against an unsandboxed peer.
 */
export async function assertSandboxes(server, sandbox, inside, outside) {
  const read = async (path, withSandbox) =>
    (
      await server.time({
        id: 'check',
        method: 'fs/readFile',
        params: { path: uri(path), sandbox: withSandbox },
      })
    ).reply.head;
  const open = await read(outside, null);
  const confined = await read(outside, sandbox);
  const granted = await read(inside, sandbox);
  if (
    !open.includes('"dataBase64"') ||
    confined.includes('"dataBase64"') ||
    !granted.includes('"dataBase64"')
  ) {
    throw new Error(
      `the reference does not sandbox reads as asked (outside unsandboxed: ${open}; outside sandboxed: ${confined}; inside sandboxed: ${granted})`,
    );
  }
}
