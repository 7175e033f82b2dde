// The V8 code cache bin/load.cjs starts the program from. It is made by running the program once,
// the way a person's first command runs it (`cat` of a small file: commander, the policy's
// schemas, the broker's set-up of a sandbox and its launch), and asking V8 for the cache of
// everything that compiled; a function that did not run is compiled lazily as usual. Sandboxed,
// since every verb is by default: trained on `cat --no-sandbox`, the sandboxed `cat` compiled its
// whole sandbox path on every run (~6 ms of CPU), for ~3 ms less on `--no-sandbox`. Where this
// machine cannot sandbox (a build container), the training falls back to `--no-sandbox`. The cache
// is only valid for the V8 that made it, so it is named by that V8's version and any other node
// ignores it.
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
    const trainer = [
      'const { loadCli, codeCachePath } = require(process.argv[1]);',
      "const { writeFileSync } = require('node:fs');",
      'const script = loadCli(null);',
      "process.on('exit', () => writeFileSync(codeCachePath(process.versions.v8), script.createCachedData()));",
    ].join('\n');
    const train = (flags) =>
      spawnSync(process.execPath, ['-e', trainer, join(root, 'bin', 'load.cjs'), 'cat', ...flags, file], {
        encoding: 'utf8',
        cwd: work,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
    const trained = (run) => run.status === 0 && run.stdout === 'a file the training run reads\n';
    let run = train([]);
    if (!trained(run)) run = train(['--no-sandbox']);
    if (!trained(run)) {
      throw new Error(`the code cache's training run failed (${run.status}): ${run.stderr}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
