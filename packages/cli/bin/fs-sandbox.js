#!/usr/bin/env node
// The `fs-sandbox` program: load.cjs starts the built bundle (dist/cli.cjs) from its code cache.
// CommonJS (bin/package.json), so that node starts it without its ES module loader.
try {
  require('./load.cjs').start();
} catch (error) {
  process.stderr.write(`fs-sandbox: cannot start (did you run the build?): ${error.message}\n`);
  process.exit(1);
}
