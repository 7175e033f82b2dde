// The helper program with a V8 code cache built in. Every helper process would otherwise compile the
// bundle (~2 ms) and then, function by function, all the code one request runs (~1-2 ms more). The
// build runs the program once on a representative request (a 1 KiB fs/readFile with a freshness
// check and a mount check, the path of every request) and saves V8's code cache; the shipped file
// compiles its program from that cache. If this node rejects the cache (another version, other
// V8 flags such as a warm spare's --no-lazy), V8 just compiles the source: never a behaviour change.
// A vm script cannot use import() in node 20 (not without --experimental-vm-modules, and not at all
// from a code cache), so the program is bundled with import() turned into require (build.mjs).

import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TRAINER = fileURLToPath(new URL('./code-cache-trainer.cjs', import.meta.url));

/** The CommonJS module wrapper, so the program runs exactly as `node helper.cjs` would run it. */
const wrap = (body) => `(function (exports, require, module, __filename, __dirname) {${body}\n})`;

export function withCodeCache(body) {
  const source = wrap(body);
  const work = mkdtempSync(join(tmpdir(), 'fs-sandbox-helper-cache-'));
  try {
    const sourceFile = join(work, 'program.cjs');
    const cacheFile = join(work, 'program.cache');
    const data = join(work, 'one-kib.bin');
    writeFileSync(sourceFile, source);
    writeFileSync(data, Buffer.alloc(1024, 7));
    const root = lstatSync(work, { bigint: true });
    const request = {
      operation: 'fs/readFile',
      params: { path: pathToFileURL(data).href, sandbox: null },
      freshness: [{ path: work, dev: root.dev.toString(), ino: root.ino.toString() }],
    };
    execFileSync(process.execPath, [TRAINER, sourceFile, cacheFile, '--expect-mounts', '/'], {
      input: `${JSON.stringify(request)}\n`,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const cache = readFileSync(cacheFile).toString('base64');
    return [
      "'use strict';",
      '// fs-sandbox helper. The program is the string below, compiled from the V8 code cache made at',
      '// build time (packages/helper/scripts/code-cache.mjs); a rejected cache just means a normal compile.',
      `const source = ${JSON.stringify(source)};`,
      `const cache = '${cache}';`,
      "const { Script } = require('node:vm');",
      "new Script(source, { filename: __filename, cachedData: Buffer.from(cache, 'base64') })",
      '  .runInThisContext()(exports, require, module, __filename, __dirname);',
      '',
    ].join('\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
