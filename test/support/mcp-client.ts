import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ListRootsRequestSchema, type Root } from '@modelcontextprotocol/sdk/types.js';
import { CLI_BIN, REPO } from './build.js';

const fromTest = createRequire(join(REPO, 'test', 'package.json'));
/** A reference server's entry point, from its package.json in a pinned devDependency (or npm alias). */
const entryOf = (packageJson: string) => join(dirname(packageJson), 'dist', 'index.js');

/** The reference as tagged latest (2026.8.31). */
export const REFERENCE_SERVER = entryOf(
  fromTest.resolve('@modelcontextprotocol/server-filesystem/package.json'),
);
/** The newest reference, 2.3.0 (not yet tagged latest): append_file, copy_file, directory_tree's depth. */
export const REFERENCE_SERVER_2_3 = entryOf(
  fromTest.resolve('@modelcontextprotocol/server-filesystem-2.3/package.json'),
);

export interface McpConnection {
  client: Client;
  /** The text of a tool call's first content block, and whether it was an error. */
  call(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ text: string; isError: boolean; result: CallToolResult }>;
  /** With roots: replace them and tell the server. */
  setRoots(roots: Root[]): Promise<void>;
  close(): Promise<void>;
}

/** Starts a server with the SDK's own stdio client; `roots` makes the client offer the Roots capability. */
export async function connectMcp(
  args: readonly string[],
  options: { roots?: Root[] } = {},
): Promise<McpConnection> {
  let roots = options.roots ?? [];
  const client = new Client(
    { name: 'fs-sandbox-e2e', version: '1.0.0' },
    options.roots ? { capabilities: { roots: { listChanged: true } } } : {},
  );
  if (options.roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [...args], stderr: 'ignore' }),
  );
  return {
    client,
    async call(name, toolArgs = {}) {
      const result = (await client.callTool({ name, arguments: toolArgs })) as CallToolResult;
      const first = result.content[0];
      return {
        text: first?.type === 'text' ? first.text : JSON.stringify(first),
        isError: result.isError === true,
        result,
      };
    },
    async setRoots(next) {
      roots = next;
      await client.sendRootsListChanged();
    },
    close: () => client.close(),
  };
}

export const ourServer = (args: readonly string[]) => [CLI_BIN, 'mcp', ...args];
export const referenceServer = (args: readonly string[]) => [REFERENCE_SERVER, ...args];
export const referenceServer23 = (args: readonly string[]) => [REFERENCE_SERVER_2_3, ...args];
