// Runs the helper program once, inside this process, and saves V8's code cache of it on exit:
// the cache then holds the compiled code of every function that request used (see code-cache.mjs).
//   node code-cache-trainer.cjs <wrapped-source-file> <cache-out> [helper args...] < request
const { readFileSync, writeFileSync } = require('node:fs');
const { Script } = require('node:vm');

const [sourceFile, cacheOut, ...helperArgs] = process.argv.slice(2);
const script = new Script(readFileSync(sourceFile, 'utf8'), { filename: sourceFile });
process.on('exit', () => writeFileSync(cacheOut, script.createCachedData()));
// The helper reads its own arguments from process.argv (after the script path).
process.argv = [process.argv[0], sourceFile, ...helperArgs];
script.runInThisContext()(exports, require, module, sourceFile, __dirname);
