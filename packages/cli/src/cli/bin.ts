import { closeInheritedDescriptors } from '@fs-sandbox/helper';
import { humanError } from './json-output.js';
import { main } from './main.js';

// Nothing this program runs may inherit what its own parent left open without close-on-exec: a
// sandboxed command would reach past the sandbox through it (runner/command-descriptors.ts).
closeInheritedDescriptors();

// A reader that stops early (`fs-sandbox explain | head`) closes stdout: stop quietly, as Unix
// tools do, instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

// The bundle entry (dist/cli.js). A command that already set process.exitCode (serve) keeps it.
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(humanError(error));
    process.exitCode = 1;
  },
);
