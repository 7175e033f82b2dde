import type { BrokerOptions, FsBroker } from '@fs-sandbox/broker/internal';
import { Command, CommanderError } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { type CliDeps, type CliIo, EXIT } from './cli-io.js';
import { escapeLines } from './terminal-text.js';

type Register = (program: Command, deps: CliDeps) => void;

/**
 * Every verb's module, loaded only when that verb runs: the broker, the policy's schemas, the
 * servers and the MCP front are what most of the program's start-up would otherwise compile and
 * evaluate, and `--version` needs none of them (bin/load.cjs gives the rest a code cache). Help
 * lists every verb, so it loads them all. In this order in `--help`.
 */
export const VERBS: Record<string, () => Promise<Register>> = {
  call: async () => (await import('./call-command.js')).registerCallCommand,
  cat: async () => (await import('./cat-command.js')).registerCatCommand,
  ls: async () => (await import('./ls-command.js')).registerLsCommand,
  write: async () => (await import('./write-command.js')).registerWriteCommand,
  'apply-patch': async () => (await import('./apply-patch-command.js')).registerApplyPatchCommand,
  stat: async () => (await import('./stat-command.js')).registerStatCommand,
  rm: async () => (await import('./rm-command.js')).registerRmCommand,
  cp: async () => (await import('./cp-command.js')).registerCpCommand,
  mv: async () => (await import('./mv-command.js')).registerMvCommand,
  mkdir: async () => (await import('./mkdir-command.js')).registerMkdirCommand,
  walk: async () => (await import('./walk-command.js')).registerWalkCommand,
  read: async () => (await import('./read-command.js')).registerReadCommand,
  edit: async () => (await import('./edit-command.js')).registerEditCommand,
  grep: async () => (await import('./grep-command.js')).registerGrepCommand,
  glob: async () => (await import('./glob-command.js')).registerGlobCommand,
  doctor: async () => (await import('./doctor-command.js')).registerDoctorCommand,
  explain: async () => (await import('./explain-command.js')).registerExplainCommand,
  why: async () => (await import('./why-command.js')).registerWhyCommand,
  demo: async () => (await import('./demo-command.js')).registerDemoCommand,
  serve: async () => (await import('./serve-command.js')).registerServeCommand,
  'app-server': async () => (await import('./app-server-command.js')).registerAppServerCommand,
  run: async () => (await import('./run-command.js')).registerRunCommand,
  mcp: async () => (await import('./mcp-command.js')).registerMcpCommand,
};

/** Other names of a verb (commander's aliases of its command), so that they load it too. */
export const VERB_ALIASES: Readonly<Record<string, keyof typeof VERBS>> = { tree: 'walk' };

/**
 * The verb `argv` runs: its first word, since the program has no options of its own but
 * `--help` and `--version`; null for those, for none, and for an unknown one (which help answers).
 */
function verbOf(argv: readonly string[]): string | null {
  const first = argv[0];
  if (first === undefined) return null;
  if (Object.hasOwn(VERB_ALIASES, first)) return VERB_ALIASES[first] as string;
  return Object.hasOwn(VERBS, first) ? first : null;
}

/** What `--version`, or `--help` with no verb, needs: no verb module at all for the former. */
function verbsFor(argv: readonly string[]): string[] {
  const verb = verbOf(argv);
  if (verb !== null) return [verb];
  return argv[0] === '--version' || argv[0] === '-V' ? [] : Object.keys(VERBS);
}

/**
 * The `fs-sandbox` program with the commands `argv` may run registered (every one for help);
 * output and usage errors go through `deps.io`.
 */
export async function buildProgram(deps: CliDeps, argv: readonly string[]): Promise<Command> {
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
  const registers = await Promise.all(
    verbsFor(argv).map((verb) => (VERBS[verb] as () => Promise<Register>)()),
  );
  for (const register of registers) register(program, deps);
  return program;
}

/** The broker a command creates, loaded with the first one (none for `--version` and help). */
async function brokerFactory(): Promise<(options: BrokerOptions) => FsBroker> {
  return (await import('@fs-sandbox/broker/internal')).createBroker;
}

/** Runs the CLI and resolves to its exit code (0 ok, 1 failed, 2 usage). */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = EXIT.ok;
  const createBroker = verbOf(argv) === null ? null : await brokerFactory();
  const deps: CliDeps = {
    io,
    createBroker: (options) => {
      if (createBroker === null) throw new Error('a command ran without its broker loaded');
      return createBroker(options);
    },
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  try {
    await (await buildProgram(deps, argv)).parseAsync([...argv], { from: 'user' });
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
    // On first use: node makes process.stdin (a stream, a socket for a pipe) when it is first
    // asked for, and most verbs never read it.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    cwd: process.cwd(),
  };
}
