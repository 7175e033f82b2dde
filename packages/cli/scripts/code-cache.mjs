// The V8 code caches bin/load.cjs starts the program from. Each is made by running the program once,
// the way a person's command runs it (`cat` of a small file: commander, the policy's schemas, the
// broker's set-up of a sandbox and its launch; with `--no-sandbox`, the helper's in-process read),
// and asking V8 for the cache of everything that compiled; a function that did not run is compiled
// lazily as usual. Two, one per kind of run (bin/load.cjs says why and picks one): sandboxed, since
// every verb is by default, and in-process for `--no-sandbox`. Where this machine cannot sandbox (a
// build container), only the in-process one is made and every run uses it. A cache is only valid
// for the V8 that made it, so it is named by that V8's version and any other node ignores it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Removes caches of other builds, then writes this node's. */
export function writeCodeCache() {
  for (const name of readdirSync(join(root, 'dist'))) {
    if (name.endsWith('.code-cache')) rmSync(join(root, 'dist', name));
  }
  const work = mkdtempSync(join(tmpdir(), 'fs-sandbox-cli-cache-'));
  try {
    const file = join(work, 'note.txt');
    writeFileSync(file, 'a file the training run reads\n');
    // The run's own process: the cache must come from a V8 that ran nothing else.
    // A cache is written only for a run that did its work: a failed run compiled other code.
    const trainer = [
      'const { loadCli, codeCachePath, cacheKind } = require(process.argv[1]);',
      "const { writeFileSync } = require('node:fs');",
      'const script = loadCli(null);',
      "process.on('exit', (code) => { if (code === 0) writeFileSync(codeCachePath(process.versions.v8, cacheKind(process.argv.slice(2))), script.createCachedData()); });",
    ].join('\n');
    const train = (flags) =>
      spawnSync(process.execPath, ['-e', trainer, join(root, 'bin', 'load.cjs'), 'cat', ...flags, file], {
        encoding: 'utf8',
        cwd: work,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
    const trained = (run) => run.status === 0 && run.stdout === 'a file the training run reads\n';
    const inProcess = train(['--no-sandbox']);
    if (!trained(inProcess)) {
      throw new Error(`the code cache's training run failed (${inProcess.status}): ${inProcess.stderr}`);
    }
    train([]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
