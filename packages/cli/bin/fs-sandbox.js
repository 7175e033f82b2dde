#!/usr/bin/env node
// Thin launcher so the bin exists at install time; the CLI itself is the built bundle.
import('../dist/cli.js').catch((error) => {
  process.stderr.write(`fs-sandbox: cannot start (did you run the build?): ${error.message}\n`);
  process.exit(1);
});
