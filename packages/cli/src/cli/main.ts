import { createBroker } from '@fs-sandbox/broker/internal';
import { Command, CommanderError } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { registerAppServerCommand } from './app-server-command.js';
import { registerApplyPatchCommand } from './apply-patch-command.js';
import { registerCallCommand } from './call-command.js';
import { registerCatCommand } from './cat-command.js';
import { type CliDeps, type CliIo, EXIT } from './cli-io.js';
import { registerCpCommand } from './cp-command.js';
import { registerDemoCommand } from './demo-command.js';
import { registerDoctorCommand } from './doctor-command.js';
import { registerEditCommand } from './edit-command.js';
import { registerExplainCommand } from './explain-command.js';
import { registerGlobCommand } from './glob-command.js';
import { registerGrepCommand } from './grep-command.js';
import { registerLsCommand } from './ls-command.js';
import { registerMcpCommand } from './mcp-command.js';
import { registerMkdirCommand } from './mkdir-command.js';
import { registerMvCommand } from './mv-command.js';
import { registerReadCommand } from './read-command.js';
import { registerRmCommand } from './rm-command.js';
import { registerRunCommand } from './run-command.js';
import { registerServeCommand } from './serve-command.js';
import { registerStatCommand } from './stat-command.js';
import { escapeLines } from './terminal-text.js';
import { registerWalkCommand } from './walk-command.js';
import { registerWhyCommand } from './why-command.js';
import { registerWriteCommand } from './write-command.js';

/** The `fs-sandbox` program with every command registered; output and usage errors go through `deps.io`. */
export function buildProgram(deps: CliDeps): Command {
  const program = new Command('fs-sandbox')
    .description('sandboxed file operations for AI coding agents (bubblewrap, Seatbelt, restricted token)')
    .version(packageJson.version)
    .exitOverride()
    // Lets `run` pass a command's own options through (`fs-sandbox run ls -la`); the program has
    // no options of its own besides --help and --version.
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => deps.io.stdout.write(text),
      writeErr: (text) => deps.io.stderr.write(text),
      // Usage errors quote the offending argument, which may be a file name; the lines are commander's.
      outputError: (text, write) => write(escapeLines(text)),
    });
  registerCallCommand(program, deps);
  registerCatCommand(program, deps);
  registerLsCommand(program, deps);
  registerWriteCommand(program, deps);
  registerApplyPatchCommand(program, deps);
  registerStatCommand(program, deps);
  registerRmCommand(program, deps);
  registerCpCommand(program, deps);
  registerMvCommand(program, deps);
  registerMkdirCommand(program, deps);
  registerWalkCommand(program, deps);
  registerReadCommand(program, deps);
  registerEditCommand(program, deps);
  registerGrepCommand(program, deps);
  registerGlobCommand(program, deps);
  registerDoctorCommand(program, deps);
  registerExplainCommand(program, deps);
  registerWhyCommand(program, deps);
  registerDemoCommand(program, deps);
  registerServeCommand(program, deps);
  registerAppServerCommand(program, deps);
  registerRunCommand(program, deps);
  registerMcpCommand(program, deps);
  return program;
}

/** Runs the CLI and resolves to its exit code (0 ok, 1 failed, 2 usage). */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = EXIT.ok;
  const deps: CliDeps = {
    io,
    createBroker,
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  try {
    await buildProgram(deps).parseAsync([...argv], { from: 'user' });
  } catch (error) {
    // --help and --version end through here too, with exit code 0.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw error;
  }
  return exitCode;
}

function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
  };
}
