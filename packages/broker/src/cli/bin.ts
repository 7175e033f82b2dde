import { humanError } from './json-output.js';
import { main } from './main.js';

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
