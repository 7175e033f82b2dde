import { explainNetwork, type NetworkExplanation } from '@fs-sandbox/broker/internal';
import { FsError, type ResultOf } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import {
  addNetworkOptions,
  type NetworkFlags,
  type PolicyOrigin,
  withNetworkFlags,
} from './context-options.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

const ACCESS_WORDS: Record<ResultOf<'fs/explainAccess'>['access'], string> = {
  write: 'can be read and written',
  read: 'can be read, not written',
  none: 'can be neither read nor written',
};

type WhyFlags = ShortcutFlags & NetworkFlags & { json?: boolean; host?: string };

/**
 * `fs-sandbox why PATH`: what the sandbox lets an operation do with PATH, and the rule that decided
 * (fs/explainAccess). `why --host HOST:PORT`: whether a command may reach it, judged as its proxy
 * would judge it here and now (the name, then each address it resolves to).
 */
export function registerWhyCommand(program: Command, deps: CliDeps): void {
  addJsonOption(addNetworkOptions(shortcutCommand(program, 'why')))
    .description(
      'say what the sandbox allows for a path (fs/explainAccess), or whether a command may reach a host, and which rule decided',
    )
    .argument('[path]', 'native path')
    .option('--host <host:port>', 'judge this destination (HOST:PORT or an http(s):// URL) instead of a path')
    .action((path: string | undefined, flags: WhyFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, policy, uri }) => {
        if ((path === undefined) === (flags.host === undefined))
          throw new FsError('invalid_params', 'why takes a PATH or --host HOST:PORT (one of them)');
        if (flags.host !== undefined) {
          const explanation = await explainNetwork(withNetworkFlags(sandbox, flags), flags.host);
          if (flags.json) deps.io.stdout.write(`${JSON.stringify(explanation)}\n`);
          else deps.io.stdout.write(describeNetwork(explanation, flags, policy));
          return;
        }
        const result = await broker.explainAccess({
          path: uri(path as string),
          sandbox: withNetworkFlags(sandbox, flags),
        });
        // The policy file's line is an extra field of the CLI's output, beside the method's result.
        const source = result.entry === undefined ? undefined : policy?.sources.get(result.entry);
        if (flags.json)
          writeResultJson(
            deps.io.stdout,
            source === undefined ? result : { ...result, policySource: source },
          );
        else deps.io.stdout.write(describeAccess(path as string, result, policy));
      }),
    );
}

function describeNetwork(
  explanation: NetworkExplanation,
  flags: NetworkFlags,
  policy: PolicyOrigin | null,
): string {
  const lines = [
    `${explanation.destination} ${explanation.reachable ? 'can' : 'cannot'} be reached by a command: ${explanation.reason}`,
  ];
  // The file's network decided unless a network flag replaced it (flags win).
  const source = policy?.profile.network?.source;
  const replaced = flags.network === true || flags.allowDomain.length > 0 || flags.denyDomain.length > 0;
  if (source !== undefined && !replaced)
    lines.push(
      `the network is profile ${policy?.profile.name}'s, written in ${source.file} line ${source.line} (${source.key})`,
    );
  if (explanation.addresses !== undefined)
    lines.push(`the proxy would connect to ${explanation.addresses.join(', ')} (resolved here, now)`);
  return `${lines.map((line) => escapeForTerminal(line)).join('\n')}\n`;
}

function describeAccess(
  path: string,
  result: ResultOf<'fs/explainAccess'>,
  policy: PolicyOrigin | null,
): string {
  const lines = [`${path} ${ACCESS_WORDS[result.access]}: ${result.reason}`];
  if (result.entry !== undefined) {
    const source = policy?.sources.get(result.entry);
    lines.push(
      source === undefined
        ? `decided by the policy entry ${result.entry}`
        : `decided by the policy entry ${result.entry}, written in ${source.file} line ${source.line} (${source.key})`,
    );
  }
  if (policy !== null) lines.push(`the sandbox is profile ${policy.profile.name} of ${policy.profile.file}`);
  if (result.protected) lines.push('it is protected: fs-sandbox never lets a sandboxed request change it');
  return `${lines.map((line) => escapeForTerminal(line)).join('\n')}\n`;
}
