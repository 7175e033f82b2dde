import { fileURLToPath } from 'node:url';
import type { Broker, FsMethod } from '@fs-sandbox/broker/internal';
import { type ExecutableSurfacePolicy, FsError, type HostOs, type ParamsIn } from '@fs-sandbox/policy';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AllowedDirectories } from './allowed-directories.js';
import { EXTRA_TOOLS } from './extra-tools.js';
import { registerFileResources } from './file-resources.js';
import { FILE_TOOLS } from './file-tools.js';
import { mcpSandboxContext } from './sandbox-context.js';
import { errorResult, errorText } from './tool-result.js';
import type { McpScope } from './tool-spec.js';
import { TREE_TOOLS } from './tree-tools.js';

export const MCP_TOOLS = [...FILE_TOOLS, ...TREE_TOOLS, ...EXTRA_TOOLS];

export interface McpServerOptions {
  broker: Broker;
  /** The DIR operands; none means the client's roots decide. */
  directories: readonly string[];
  /** What relative DIR operands are under. */
  base: string;
  readOnly: boolean;
  /** `--read-only-dir` directories, resolved at start (AllowedDirectories.resolveReadOnly). */
  readOnlyDirectories?: readonly string[];
  /** `--confine-roots`: the client's roots narrow the DIR operands instead of being ignored. */
  confineRoots?: boolean;
  deny: readonly string[];
  /** What a policy file's profile adds to the protected surface. */
  executableSurface?: ExecutableSurfacePolicy | undefined;
  os: HostOs;
  /** Diagnostics (stdout is the protocol). */
  log(line: string): void;
  version: string;
}

const ROOTS_TIMEOUT_MS = 10_000;

const textOutput = { content: z.string(), errorKind: z.string().optional() };

/**
 * The MCP filesystem server: the reference's tools (and three more) with every call run through
 * the broker in a sandbox built from the allowed directories. The SDK is imported here, when the
 * `mcp` command runs, so the other commands never load it.
 */
export async function createMcpServer(options: McpServerOptions): Promise<McpServer> {
  const [{ McpServer }, { RootsListChangedNotificationSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const server = new McpServer({ name: 'fs-sandbox', version: options.version });
  const scopes = new ScopeHolder(options);
  for (const tool of MCP_TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema ?? textOutput,
        annotations: tool.annotations,
      },
      async (args) => {
        try {
          return await tool.run(args as never, await scopes.current());
        } catch (error) {
          return errorResult(error);
        }
      },
    );
  }
  await registerFileResources(server, () => scopes.current());
  errorsWithKindInToolShape(
    server,
    new Set(MCP_TOOLS.filter((tool) => tool.outputSchema !== undefined).map((tool) => tool.name)),
  );
  // The reference asks for roots whatever its command line; ours only when they decide something:
  // with no DIR (they are the directories) or with --confine-roots (they narrow the DIRs).
  if (scopes.followsRoots) {
    const fetchRoots = async () => {
      // Bounded: calls wait for this answer, and a client may never give it.
      const { roots } = await server.server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS });
      scopes.replace(
        roots.map((root) => (root.uri.startsWith('file://') ? fileURLToPath(root.uri) : root.uri)),
      );
    };
    server.server.oninitialized = () => {
      if (server.server.getClientCapabilities()?.roots) scopes.waitFor(fetchRoots());
      else if (scopes.isEmpty)
        options.log(
          'fs-sandbox mcp: no DIR given and the client offers no roots: every tool call is refused',
        );
    };
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
      scopes.waitFor(fetchRoots());
    });
  }
  return server;
}

type CallHandler = (request: { params: { name: string } }, extra: unknown) => Promise<CallToolResult>;

/**
 * Every `isError` result in one form. The SDK answers arguments that fail a tool's schema (and
 * unknown tools) with a text of its own and no structuredContent: the text is kept, with the kind
 * put in front of it, as for every other refusal. And the SDK's client checks an error's
 * structuredContent against the tool's output schema too, so a tool whose content is not text
 * (read_media_file) gets an empty list beside the kind, never a text there (which the client
 * reported as a protocol error, not as the tool's error). The SDK has no public hook after its
 * own tools/call handler, hence the wrap of the one it installed.
 */
function errorsWithKindInToolShape(server: McpServer, nonTextTools: ReadonlySet<string>): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, CallHandler> })
    ._requestHandlers;
  const sdkHandler = handlers.get('tools/call');
  if (sdkHandler === undefined) throw new Error('the MCP SDK installed no tools/call handler');
  handlers.set('tools/call', async (request, extra) => {
    const result = await sdkHandler(request, extra);
    if (!result.isError) return result;
    const first = result.content[0];
    const failure =
      result.structuredContent === undefined
        ? errorText('invalid_params', first?.type === 'text' ? first.text : 'invalid arguments')
        : result;
    if (!nonTextTools.has(request.params.name)) return failure;
    return {
      ...failure,
      structuredContent: { content: [], errorKind: failure.structuredContent?.errorKind },
    };
  });
}

/** The allowed directories in force, replaced when the client's roots change. */
class ScopeHolder {
  private scope: McpScope;
  private pending: Promise<void> = Promise.resolve();
  /** The DIR operands with the read-only directories: what --confine-roots keeps roots inside. */
  private readonly commandLine: AllowedDirectories;
  /** Once the client's roots have replaced the DIRs, roots naming no usable directory revoke access. */
  private rootsInForce = false;

  constructor(private readonly options: McpServerOptions) {
    this.commandLine = AllowedDirectories.resolve(
      options.directories,
      options.base,
      options.os,
      options.log,
      options.readOnlyDirectories,
    ).withReadOnly();
    this.scope = this.scopeFor(this.commandLine);
  }

  get followsRoots(): boolean {
    return this.commandLine.isEmpty || this.options.confineRoots === true;
  }

  get isEmpty(): boolean {
    return this.scope.directories.isEmpty;
  }

  /** Waits for a roots update in flight, so a call never runs under the roots it replaces. */
  async current(): Promise<McpScope> {
    await this.pending;
    return this.scope;
  }

  waitFor(update: Promise<void>): void {
    this.pending = update.catch((error: unknown) =>
      this.options.log(`fs-sandbox mcp: could not read the client's roots: ${(error as Error).message}`),
    );
  }

  replace(requested: readonly string[]): void {
    const { os, log } = this.options;
    let roots = AllowedDirectories.resolve(requested, process.cwd(), os, log, this.commandLine.readOnly);
    if (!this.commandLine.isEmpty)
      roots = roots.confinedTo(this.commandLine, (root) =>
        log(
          `fs-sandbox mcp: ignored a client root outside the command-line directories (--confine-roots): ${root}`,
        ),
      );
    if (roots.isEmpty && !this.rootsInForce) {
      log('fs-sandbox mcp: the client gave no usable root; the allowed directories stay as they were');
      return;
    }
    // As the reference's 2.3.0: a client that withdraws its last root withdraws the server's access.
    this.scope = this.scopeFor(roots);
    this.rootsInForce = true;
    log(
      roots.isEmpty
        ? "fs-sandbox mcp: the client's roots name no usable directory: every call is refused until one is given"
        : `fs-sandbox mcp: allowed directories from the client's roots: ${roots.directories.join(', ')}`,
    );
  }

  private scopeFor(directories: AllowedDirectories): McpScope {
    const { broker, os } = this.options;
    const sandbox = directories.isEmpty
      ? null
      : mcpSandboxContext({
          directories: directories.directories,
          readOnlyDirectories: directories.readOnly,
          readOnly: this.options.readOnly,
          deny: this.options.deny,
          executableSurface: this.options.executableSurface,
          os,
        });
    return {
      directories,
      call<M extends FsMethod>(method: M, params: Omit<ParamsIn<M>, 'sandbox'>) {
        if (sandbox === null)
          throw new FsError(
            'permission_denied',
            "no allowed directories: none given, and the client's roots name none",
          );
        return broker.call(method, { ...params, sandbox } as ParamsIn<M>);
      },
    };
  }
}
