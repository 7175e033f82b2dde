import {
  type KernelPath,
  LANDLOCK_DIFFERENCES,
  type LaunchSpec,
  type LinuxBackendPreference,
  launchCommand,
  MASKED_KERNEL_PATHS,
  PROXY_PORTS,
  READ_ONLY_KERNEL_PATHS,
} from '@fs-sandbox/broker/internal';
import {
  currentHostOs,
  type HostOs,
  type PermissionProfile,
  parseSandboxContext,
  pathUriToNative,
  type SandboxPlan,
} from '@fs-sandbox/policy';
import { decodeBpf, disassembleSeccomp } from '@fs-sandbox/policy/seccomp';
import { type Command, Option } from 'commander';
import { addBackendOption } from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import {
  addContextOptions,
  addNetworkOptions,
  type ContextFlags,
  contextFromFlags,
  type NetworkFlags,
  withNetworkFlags,
} from './context-options.js';
import { explainForPlatform } from './explain-foreign.js';
import { humanError } from './json-output.js';
import { formatCommand } from './shell-quote.js';
import { escapeForTerminal, escapeLines, terminalSafeJson } from './terminal-text.js';

/** The line between the summary and the exact command; `--raw` prints only what follows it. */
export const EXPLAIN_SEPARATOR = '---- exact command (--raw prints only this part) ----';

/**
 * `fs-sandbox explain`: what a sandbox context lets the helper do, in words, then the exact
 * platform command it produces. On this host it is the argv the runner would spawn (same plan, same
 * host facts); for another platform it is that platform's pure builder, with the runtime locations
 * it cannot see stated as assumptions. `--raw` prints the command part alone.
 */
export function registerExplainCommand(program: Command, deps: CliDeps): void {
  addBackendOption(addNetworkOptions(addContextOptions(program.command('explain'))))
    .description('say what a context allows, then print the exact sandbox command it produces')
    .argument('[context]', 'sandbox context as JSON (wire form); or use the profile flags')
    .addOption(new Option('--platform <os>', 'target platform').choices(['linux', 'macos', 'windows']))
    .option('--raw', 'print only the exact command (and the backend details), no summary')
    .action(
      async (
        contextJson: string | undefined,
        flags: ContextFlags &
          NetworkFlags & { platform?: HostOs; raw?: boolean; backend?: LinuxBackendPreference },
      ) => {
        const host = currentHostOs();
        const platform = flags.platform ?? host;
        const broker = deps.createBroker({
          env: deps.io.env,
          ...(flags.backend === undefined ? {} : { backend: flags.backend }),
        });
        try {
          // The same context the human verbs would run with (sandboxed by default on the cwd); the
          // directories can only be checked on this host.
          const sandbox = withNetworkFlags(
            contextFromFlags(
              contextJson === undefined ? flags : { ...flags, sandbox: contextJson },
              deps.io,
              platform,
              { sandboxByDefault: true, checkDirectories: platform === host },
            ),
            contextJson === undefined ? flags : { ...flags, sandbox: contextJson },
          );
          const { plan, launch, assumptions, runtimeReason } =
            platform === host
              ? { ...(await broker.prepareSandbox(sandbox)), assumptions: [] }
              : await explainForPlatform(parseSandboxContext(sandbox), platform, deps.io.env);
          const profile = parseSandboxContext(sandbox)?.permissions ?? null;
          if (!flags.raw)
            deps.io.stdout.write(
              `${[...summarizeSandbox(plan, launch, runtimeReason ?? null), ...describeCommandNetwork(profile)].join('\n')}\n\n${EXPLAIN_SEPARATOR}\n`,
            );
          const notes = assumptions.map((note) => `# assumed: ${note}\n`).join('');
          const command = launchCommand(launch);
          deps.io.stdout.write(
            `# backend: ${launch.backend} (${platform})\n${notes}${formatCommand(command.file, command.args)}\n`,
          );
          deps.io.stdout.write(launchInputNotes(launch).join(''));
          for (const [name, value] of Object.entries(launch.details ?? {})) {
            deps.io.stdout.write(
              `# ${name}:\n${typeof value === 'string' ? escapeLines(value) : terminalSafeJson(JSON.stringify(value, null, 2))}\n`,
            );
          }
        } catch (error) {
          deps.io.stderr.write(humanError(error));
          deps.setExitCode(EXIT.failed);
        } finally {
          await broker.close();
        }
      },
    );
}

const NETWORK: Record<LaunchSpec['backend'], string> = {
  bwrap: 'none (the helper runs in its own empty network namespace)',
  landlock: 'none (seccomp refuses every socket, Landlock every TCP bind and connect)',
  seatbelt: 'none (the profile denies network*)',
  'restricted-token': 'not blocked by the token (the helper opens no sockets)',
};

/**
 * What a command run under this context may reach (`run`, process/start): the helper itself never
 * has a network, whatever the context says.
 */
export function describeCommandNetwork(profile: PermissionProfile | null): string[] {
  const label = '  commands     ';
  const indent = ' '.repeat(15);
  if (profile === null || profile.type !== 'managed')
    return [`${label}network: not sandboxed by this context`];
  if (profile.network === 'enabled') return [`${label}network: the host's whole network`];
  const sockets = (profile.unix_sockets ?? []).map((uri) => pathUriToNative(uri, currentHostOs()));
  const relayed =
    sockets.length === 0
      ? [`${indent}unix sockets: none (no AF_UNIX socket of their own; socketpair works)`]
      : [
          `${indent}unix sockets: only these, each relayed by fs-sandbox to a 127.0.0.1 port (FS_SANDBOX_UNIX_SOCKETS)`,
          ...sockets.map((path) => `${indent}  ${escapeForTerminal(path)}`),
        ];
  return [...describeDomains(profile, label, indent), ...relayed];
}

function describeDomains(
  profile: Extract<PermissionProfile, { type: 'managed' }>,
  label: string,
  indent: string,
): string[] {
  const domains = profile.network_domains;
  if (domains == null) return [`${label}network: none (an empty network namespace of their own)`];
  const lines = [
    `${label}network: only through fs-sandbox's proxy (HTTP 127.0.0.1:${PROXY_PORTS.http}, SOCKS5 127.0.0.1:${PROXY_PORTS.socks}), to`,
    ...(domains.allow.length === 0 ? ['nothing'] : domains.allow).map(
      (entry) => `${indent}  ${escapeForTerminal(entry)}`,
    ),
  ];
  if (domains.deny.length > 0)
    lines.push(`${indent}never to`, ...domains.deny.map((entry) => `${indent}  ${escapeForTerminal(entry)}`));
  lines.push(
    `${indent}and never, unless an entry names that address and port, to loopback, link-local or cloud`,
    `${indent}metadata addresses or the host's own (private networks: an entry naming that host and port)`,
  );
  return lines;
}

/**
 * The plan in words, one fact a line, paths escaped for the terminal: what the helper may read and
 * write, what is denied and protected, its network and the environment variables it is given.
 */
export function summarizeSandbox(
  plan: SandboxPlan,
  launch: LaunchSpec,
  runtimeReason: string | null = null,
): string[] {
  const label = (name: string) => `  ${name.padEnd(13)}`;
  const indent = ' '.repeat(15);
  const list = (name: string, items: readonly string[], none: string): string[] =>
    items.length === 0
      ? [`${label(name)}${none}`]
      : items.map((item, index) => `${index === 0 ? label(name) : indent}${escapeForTerminal(item)}`);
  const lines = [
    `The helper runs under ${launch.backend} (${plan.os}${launch.reason === undefined ? '' : `; ${escapeForTerminal(launch.reason)}`}) and may:`,
  ];
  lines.push(
    ...(plan.fullDiskRead || (plan.readableRoots.length === 1 && plan.readableRoots[0] === '/')
      ? [`${label('read')}the whole disk (read-only), except what is denied below`]
      : list('read', plan.readableRoots, 'nothing')),
  );
  if (plan.writableRoots.length === 0) lines.push(`${label('write')}nothing`);
  for (const [index, root] of plan.writableRoots.entries()) {
    lines.push(`${index === 0 ? label('write') : indent}${escapeForTerminal(root.root)}`);
    if (root.readOnlySubpaths.length > 0) {
      lines.push(`${indent}  read-only inside: ${root.readOnlySubpaths.map(escapeForTerminal).join(', ')}`);
    }
    if (root.protectedNames.length > 0) {
      lines.push(`${indent}  protected (never written directly under it): ${root.protectedNames.join(', ')}`);
    }
  }
  const denied = [
    ...plan.deniedPaths,
    ...(plan.unshownDeniedPaths ?? []).map(
      (path) => `${path} (granted by no name; masked where a link shows it)`,
    ),
  ];
  lines.push(...list('not access', denied, 'no denied paths'));
  if (plan.denyGlobs.length > 0) lines.push(...list('nor match', plan.denyGlobs, ''));
  if ((launch.denyGlobMatches ?? []).length > 0) {
    lines.push(...list('  masked now', launch.denyGlobMatches ?? [], ''));
  }
  lines.push(`${label('network')}${NETWORK[launch.backend]}`);
  const names = Object.keys(launch.env).sort();
  lines.push(
    `${label('environment')}${names.length === 0 ? 'none' : names.map(escapeForTerminal).join(', ')}`,
  );
  if (plan.cwd !== null) lines.push(`${label('cwd')}${escapeForTerminal(plan.cwd)}`);
  if (launch.inputs?.seccomp != null) {
    lines.push(
      `${label('system calls')}no unix sockets (socketpair works), no io_uring, keyrings, bpf, perf events or userfaultfd (seccomp)`,
    );
  }
  // The kernel's own paths this launch covers, as its argv names them (only those this kernel has).
  const covered = (entries: readonly KernelPath[]) =>
    entries.map((entry) => entry.path).filter((path) => launch.sandboxArgs.includes(path));
  const readOnly = covered(READ_ONLY_KERNEL_PATHS);
  const masked = covered(MASKED_KERNEL_PATHS);
  if (readOnly.length > 0) lines.push(`${label('kernel')}read-only: ${readOnly.join(', ')}`);
  if (masked.length > 0)
    lines.push(`${readOnly.length > 0 ? indent : label('kernel')}masked: ${masked.join(', ')}`);
  if (launch.backend === 'landlock') {
    lines.push(
      `${label('system calls')}no new user namespace, mount or namespace switch; no capability kept (seccomp, capset)`,
      `${label('scoped')}signals, ptrace and abstract unix sockets only within the sandbox (Landlock)`,
      ...LANDLOCK_DIFFERENCES.map(
        (difference, index) => `${index === 0 ? label('unlike bwrap') : indent}${difference}`,
      ),
    );
  }
  const why = runtimeReason === null ? '' : ` (${runtimeReason})`;
  lines.push(`${label('runtime')}${launch.runtimeKind} ${escapeForTerminal(launch.runtime)}${why}`);
  return lines;
}

/** What the descriptors the command line names hold: the filter, disassembled, then the empty inputs. */
function launchInputNotes(launch: LaunchSpec): string[] {
  const inputs = launch.inputs;
  if (inputs === undefined) return [];
  const notes: string[] = [];
  let fd = inputs.firstFd;
  if (inputs.seccomp !== null) {
    const program = decodeBpf(Buffer.from(inputs.seccomp, 'base64'));
    notes.push(`# descriptor ${fd}: the seccomp filter bwrap loads (${program.length} instructions):\n`);
    for (const line of disassembleSeccomp(program)) notes.push(`#   ${line}\n`);
    fd += 1;
  }
  if (inputs.emptyInputs > 0) {
    const last = fd + inputs.emptyInputs - 1;
    notes.push(
      `# descriptor${last > fd ? `s ${fd}-${last}` : ` ${fd}`}: empty (the content of the masked kernel files)\n`,
    );
  }
  return notes;
}
