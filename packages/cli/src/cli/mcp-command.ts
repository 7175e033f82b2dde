import { currentHostOs } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { addBrokerOptions, type BrokerFlags, brokerOptionsFrom } from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { collect } from './context-options.js';
import { addPoolOptions, type PoolFlags, poolOptionsFrom } from './pool-flags.js';
import { escapeForTerminal } from './terminal-text.js';

interface McpFlags extends BrokerFlags, PoolFlags {
  readOnly?: boolean;
  deny: string[];
}

/** `fs-sandbox mcp DIR…`: the MCP filesystem server over stdio, every tool call sandboxed. */
export function registerMcpCommand(program: Command, deps: CliDeps): Command {
  return addPoolOptions(addBrokerOptions(program.command('mcp')))
    .description(
      'serve the MCP filesystem tools over stdio (a drop-in for @modelcontextprotocol/server-filesystem), each call in a sandbox of the allowed directories',
    )
    .argument('[dirs...]', "allowed directories (none: the client's MCP roots)")
    .option('--read-only', 'the allowed directories are readable only')
    .option(
      '--deny <path|glob>',
      'deny all access to this path, or to what a glob matches (a value with * ? [ { is a glob) (repeatable)',
      collect,
      [],
    )
    .action(async (dirs: string[], flags: McpFlags) => {
      const { AllowedDirectories } = await import('../mcp/allowed-directories.js');
      const os = currentHostOs();
      const log = (line: string) => deps.io.stderr.write(`${escapeForTerminal(line)}\n`);
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
        pool: poolOptionsFrom(flags),
      });
      const server = await createMcpServer({
        broker,
        directories: dirs,
        base: deps.io.cwd,
        readOnly: flags.readOnly === true,
        deny: flags.deny,
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
