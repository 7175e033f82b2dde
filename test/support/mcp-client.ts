import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ListRootsRequestSchema, type Root } from '@modelcontextprotocol/sdk/types.js';
import { CLI_BIN, REPO } from './build.js';

/** The reference server's entry point, from the pinned devDependency of this package. */
export const REFERENCE_SERVER = join(
  dirname(
    createRequire(join(REPO, 'test', 'package.json')).resolve(
      '@modelcontextprotocol/server-filesystem/package.json',
    ),
  ),
  'dist',
  'index.js',
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
