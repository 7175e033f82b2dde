import { currentHostOs, FsError, LIMITS } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { addBrokerOptions, type BrokerFlags, brokerOptionsFrom } from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { addPolicyOptions, collect, type PolicyFlags, policyProfileFrom } from './context-options.js';
import { humanError } from './json-output.js';
import { isBuiltInProfile, type PolicyProfile, surfacePolicy } from './policy-file.js';
import { addPoolOptions, type PoolFlags, poolOptionsFrom } from './pool-flags.js';
import { escapeForTerminal } from './terminal-text.js';

interface McpFlags extends BrokerFlags, PoolFlags, PolicyFlags {
  readOnly?: boolean;
  readOnlyDir: string[];
  confineRoots?: boolean;
  deny: string[];
}

/** `fs-sandbox mcp DIR…`: the MCP filesystem server over stdio, every tool call sandboxed. */
export function registerMcpCommand(program: Command, deps: CliDeps): Command {
  return addPoolOptions(addBrokerOptions(addPolicyOptions(program.command('mcp'))))
    .description(
      `serve the MCP filesystem tools over stdio (a drop-in for @modelcontextprotocol/server-filesystem), each call in a sandbox of the allowed directories; a helper run is bounded to ${LIMITS.mcpHelperTimeoutMs / 1000} s unless --timeout says otherwise`,
    )
    .argument('[dirs...]', "allowed directories (none: the client's MCP roots)")
    .option('--read-only', 'the allowed directories are readable only')
    .option(
      '--read-only-dir <dir>',
      'an allowed directory that is readable only (a read root of the sandbox; it must exist) (repeatable)',
      collect,
      [],
    )
    .option(
      '--confine-roots',
      "with DIRs: the client's MCP roots narrow them (their overlap) instead of being ignored",
    )
    .option(
      '--deny <path|glob>',
      'deny all access to this path, or to what a glob matches (a value with * ? [ { is a glob) (repeatable)',
      collect,
      [],
    )
    .option(
      '--profile <name>',
      'a profile of the policy file (--policy or --find-policy): its roots, denies and protected names',
    )
    .action(async (operands: string[], flags: McpFlags) => {
      const { AllowedDirectories } = await import('../mcp/allowed-directories.js');
      const os = currentHostOs();
      const log = (line: string) => deps.io.stderr.write(`${escapeForTerminal(line)}\n`);
      let policy: PolicyProfile | null;
      let dirs: string[];
      let readOnlyDirectories: string[];
      try {
        policy = mcpPolicy(flags, deps);
        // The DIR operands win over the profile's roots, as every flag wins over the file.
        dirs = operands.length > 0 || policy === null ? operands : profileDirectories(policy);
        readOnlyDirectories = AllowedDirectories.resolveReadOnly(flags.readOnlyDir, deps.io.cwd);
      } catch (error) {
        deps.io.stderr.write(humanError(error));
        deps.setExitCode(EXIT.usage);
        return;
      }
      if (policy !== null) log(`fs-sandbox mcp: profile ${policy.name} of ${policy.file}`);
      if (flags.confineRoots && dirs.length === 0 && readOnlyDirectories.length === 0)
        log(
          "fs-sandbox mcp: --confine-roots has no effect without DIRs; the client's roots set the directories",
        );
      // As the reference: DIRs that all fail to name a directory are a start-up error, not an empty server.
      if (dirs.length > 0 && AllowedDirectories.resolve(dirs, deps.io.cwd, os, () => {}).isEmpty) {
        log(`fs-sandbox mcp: none of the directories is accessible: ${dirs.join(', ')}`);
        deps.setExitCode(EXIT.usage);
        return;
      }
      const { createMcpServer } = await import('../mcp/mcp-server.js');
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      const broker = deps.createBroker({
        ...brokerOptionsFrom(flags, deps.io),
        // The reference's bound unless --timeout names one.
        timeoutMs: flags.timeout ?? LIMITS.mcpHelperTimeoutMs,
        pool: poolOptionsFrom(flags),
      });
      const server = await createMcpServer({
        broker,
        directories: dirs,
        base: deps.io.cwd,
        readOnly: flags.readOnly === true || policy?.sandboxMode === 'read-only',
        readOnlyDirectories,
        confineRoots: flags.confineRoots === true,
        deny: [...(policy?.deny.map(({ value }) => value) ?? []), ...flags.deny],
        executableSurface: policy === null ? undefined : surfacePolicy(policy, os),
        os,
        log,
        version: packageJson.version,
      });
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = resolve;
      });
      await server.connect(new StdioServerTransport(deps.io.stdin as never, deps.io.stdout as never));
      // The transport does not end with its input; a client that closes our stdin is gone.
      deps.io.stdin.once('end', () => void server.close());
      await closed;
      await broker.close();
    });
}

/**
 * The policy file's profile for `mcp`. MCP's tools run no command, so the profile's network keys
 * have nothing to apply to; and there are no built-in profiles here (`--read-only` says it).
 */
function mcpPolicy(flags: McpFlags, deps: CliDeps): PolicyProfile | null {
  if (
    flags.profile !== undefined &&
    isBuiltInProfile(flags.profile) &&
    flags.policy === undefined &&
    !flags.findPolicy
  )
    throw new FsError(
      'invalid_params',
      `mcp has no built-in profiles: --read-only serves the directories read-only`,
    );
  return policyProfileFrom(flags, deps.io);
}

/**
 * The allowed directories a profile names: its writable roots, or a read-only profile's read
 * roots. MCP's directories are all writable or all read-only, so a workspace-write profile's read
 * roots cannot be served beside its writable ones: refused rather than dropped.
 */
function profileDirectories(policy: PolicyProfile): string[] {
  if (policy.sandboxMode === 'read-only') return policy.readRoots.map(({ value }) => value);
  const readRoot = policy.readRoots[0];
  if (readRoot !== undefined)
    throw new FsError(
      'invalid_params',
      `mcp serves its directories all writable or all read-only: profile ${policy.name}'s read_roots (${readRoot.source.file} line ${readRoot.source.line}) cannot be served beside its writable_roots; give the directories as operands`,
    );
  return policy.writableRoots.map(({ value }) => value);
}
