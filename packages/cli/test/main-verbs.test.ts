import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliDeps } from '../src/cli/cli-io.js';
import { buildProgram, VERB_ALIASES, VERBS } from '../src/cli/main.js';

/**
 * main.ts loads a verb's module by the verb's name: every command the full program registers must
 * be reachable by its name and by each of its aliases, or that spelling would run as unknown.
 */

const deps: CliDeps = {
  io: { stdout: new PassThrough(), stderr: new PassThrough(), stdin: Readable.from([]), env: {}, cwd: '/' },
  createBroker: () => {
    throw new Error('no command runs here');
  },
  setExitCode: () => {},
};

describe('the verbs main.ts loads on demand', () => {
  it('are each module under its command name, and every alias is known', async () => {
    const program = await buildProgram(deps, ['--help']);
    const commands = program.commands.map((command) => command.name());
    expect(commands).toEqual(Object.keys(VERBS));
    const aliases = Object.fromEntries(
      program.commands.flatMap((command) => command.aliases().map((alias) => [alias, command.name()])),
    );
    expect(aliases).toEqual(VERB_ALIASES);
  });

  it('registers only the verb that runs, or none for --version', async () => {
    expect((await buildProgram(deps, ['tree', '.'])).commands.map((command) => command.name())).toEqual([
      'walk',
    ]);
    expect((await buildProgram(deps, ['cat', 'x'])).commands.map((command) => command.name())).toEqual([
      'cat',
    ]);
    expect((await buildProgram(deps, ['--version'])).commands).toEqual([]);
  });
});
