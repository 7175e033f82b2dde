'use strict';
// Starts the `fs-sandbox` program, dist/cli.cjs, compiled from a V8 code cache the build made for
// it when this node's V8 is the one the cache was made by (dist/cli.<V8 version>.<kind>.code-cache):
// every start would otherwise parse and compile the bundle again, most of what `fs-sandbox
// --version` cost. Any other V8 gets node's own compile cache where it has one (module.enableCompileCache,
// node 22.1 and later), else a plain compile. A cache V8 rejects (other flags) is a plain compile
// too: never a change in behaviour. `scripts/code-cache.mjs` makes the caches with `loadCli`.
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const { join } = require('node:path');
const { Script } = require('node:vm');

const DIST = join(__dirname, '..', 'dist');
const PROGRAM = join(DIST, 'cli.cjs');

/**
 * The build makes two caches, each from a run of its kind: `in-process` (`--no-sandbox`) and
 * `sandboxed` (every other run: verbs are sandboxed by default). A cache holds the code its run
 * compiled and is deserialized whole at every start, so a single cache costs the kind it was not
 * made from: the sandboxed one ~3 ms of CPU on an in-process `cat`, the in-process one ~6 ms on
 * a sandboxed `cat`, compiling the sandbox's set-up.
 */
const CACHE_KINDS = ['sandboxed', 'in-process'];

/** The cache kind `argv` (the program's arguments) runs as. */
function cacheKind(argv) {
  return argv.includes('--no-sandbox') ? 'in-process' : 'sandboxed';
}

/** The cache of `kind` for this node's V8 (the build writes the ones of the node that ran it). */
function codeCachePath(v8Version, kind) {
  return join(DIST, `cli.${v8Version}.${kind}.code-cache`);
}

/**
 * Runs the program as node would run a CommonJS file (the same wrapper, `require` resolving from
 * dist), from `cachedData` when there is one (`null`: compile it, the cache maker's run). Returns
 * the compiled script (the cache maker asks it for its cache), or null when node's own loader ran it.
 */
function loadCli(cachedData = readCodeCache()) {
  if (cachedData === undefined && typeof Module.enableCompileCache === 'function') {
    Module.enableCompileCache();
    require(PROGRAM);
    return null;
  }
  // The build makes the bundle pure ASCII (scripts/build.mjs checks it), so latin1 reads it as
  // utf8 would, but without utf8's decoding: that cost several milliseconds of every start.
  const source = readFileSync(PROGRAM, 'latin1');
  const script = new Script(Module.wrap(source), { filename: PROGRAM, cachedData: cachedData ?? undefined });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, Module.createRequire(PROGRAM), module, PROGRAM, DIST);
  return script;
}

/**
 * This run's cache, else the other kind's (a build machine that cannot sandbox makes only the
 * in-process one), else undefined.
 */
function readCodeCache() {
  const kind = cacheKind(process.argv.slice(2));
  for (const candidate of [kind, ...CACHE_KINDS.filter((other) => other !== kind)]) {
    try {
      return readFileSync(codeCachePath(process.versions.v8, candidate));
    } catch {
      // Not made by this build (or for another V8): the next one.
    }
  }
  return undefined;
}

/**
 * `fs-sandbox --version` alone needs nothing of the program, so it is answered here from the
 * package's manifest, as the program itself would answer it (main.ts registers no verb for it).
 */
function start() {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${require('../package.json').version}\n`);
    return;
  }
  loadCli();
}

module.exports = { start, loadCli, codeCachePath, cacheKind, CACHE_KINDS };
