import { main } from './main.js';
import { escapeForTerminal } from './terminal-text.js';

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
    process.stderr.write(
      `fs-sandbox: internal error: ${escapeForTerminal(error instanceof Error ? error.message : String(error))}\n`,
    );
    process.exitCode = 1;
  },
);
