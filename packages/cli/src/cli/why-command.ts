import type { ResultOf } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

const ACCESS_WORDS: Record<ResultOf<'fs/explainAccess'>['access'], string> = {
  write: 'can be read and written',
  read: 'can be read, not written',
  none: 'can be neither read nor written',
};

/** `fs-sandbox why PATH`: what the sandbox lets an operation do with PATH, and the rule that decided (fs/explainAccess). */
export function registerWhyCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'why'))
    .description('say what the sandbox allows for a path, and which rule decided (fs/explainAccess)')
    .argument('<path>', 'native path')
    .action((path: string, flags: ShortcutFlags & { json?: boolean }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri }) => {
        const result = await broker.explainAccess({ path: uri(path), sandbox });
        if (flags.json) writeResultJson(deps.io.stdout, result);
        else deps.io.stdout.write(describeAccess(path, result));
      }),
    );
}

function describeAccess(path: string, result: ResultOf<'fs/explainAccess'>): string {
  const lines = [`${path} ${ACCESS_WORDS[result.access]}: ${result.reason}`];
  if (result.entry !== undefined) lines.push(`decided by the policy entry ${result.entry}`);
  if (result.protected) lines.push('it is protected: fs-sandbox never lets a sandboxed request change it');
  return `${lines.map((line) => escapeForTerminal(line)).join('\n')}\n`;
}
