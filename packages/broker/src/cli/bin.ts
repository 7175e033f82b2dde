import { main } from './main.js';

// The bundle entry (dist/cli.js). A command that already set process.exitCode (serve) keeps it.
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `fs-sandbox: internal error: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
