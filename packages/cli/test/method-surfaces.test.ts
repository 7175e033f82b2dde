import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFsMethod } from '@fs-sandbox/broker/internal';
import { type ExposedMethod, isExposedMethod, METHODS } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VERBS } from '../src/cli/main.js';
import { AllowedDirectories } from '../src/mcp/allowed-directories.js';
import { MCP_TOOLS } from '../src/mcp/mcp-server.js';
import type { McpScope } from '../src/mcp/tool-spec.js';

/**
 * Every method a client may send, with the CLI verb and the MCP tool that run it, or the reason
 * there is none. A method added to the table without a decision here fails the first test; a verb
 * or tool named here that does not run that method fails the others. (`fs-sandbox call` sends any
 * file method and fs/explainAccess as its JSON params say; the verb column is the dedicated one.)
 */

type Decision = { readonly verb: string } | { readonly noVerb: string };
type ToolDecision = { readonly tool: string } | { readonly noTool: string };

const HANDLES_NO_VERB =
  'a handle lives on a server connection; a CLI verb is one request (`read` and `cat` stream large files themselves)';
const HANDLES_NO_TOOL = 'a handle holds state across requests; MCP tool calls are independent of each other';
const PROCESS_NO_VERB =
  '`fs-sandbox run` runs a command through the command API (the launch process/start uses) and streams it to the terminal; the process methods need a connection that outlives one request';
const PROCESS_NO_TOOL = 'the MCP front serves files only, as the reference filesystem server does';
const ENVIRONMENT_NO_VERB = "what a connected server reports about itself; `doctor` reports this host's";

const SURFACES: Readonly<Record<ExposedMethod, Decision & ToolDecision>> = {
  initialize: {
    noVerb: 'the handshake of a server connection; a CLI verb opens none',
    noTool: 'MCP has its own initialize, answered by the SDK',
  },
  'fs/readFile': { verb: 'cat', tool: 'read_media_file' },
  'fs/writeFile': { verb: 'write', tool: 'write_file' },
  'fs/readTextFile': { verb: 'read', tool: 'read_text_file' },
  'fs/edit': {
    verb: 'edit',
    noTool:
      "edit_file keeps the reference tool's loose matching (whitespace-insensitive lines) and dryRun diff, which fs/edit's exact replacement does not do: it reads with fs/readTextFile and writes with fs/writeFile guarded by the sha256 it read",
  },
  'fs/createDirectory': { verb: 'mkdir', tool: 'create_directory' },
  'fs/getMetadata': { verb: 'stat', tool: 'get_file_info' },
  'fs/canonicalize': {
    verb: 'ls',
    noTool:
      "the reference filesystem server has no such tool; a tool's path is resolved by the allowed directories",
  },
  'fs/readDirectory': { verb: 'ls', tool: 'list_directory' },
  'fs/remove': { verb: 'rm', tool: 'delete_file' },
  'fs/copy': {
    verb: 'cp',
    noTool:
      'the reference filesystem server has no copy tool (fs-sandbox adds search_content, apply_patch, delete_file)',
  },
  'fs/walk': { verb: 'walk', tool: 'directory_tree' },
  'fs/search': { verb: 'grep', tool: 'search_content' },
  'fs/glob': {
    verb: 'glob',
    noTool:
      "search_files matches the reference tool's globs on the walk (directories too, excludePatterns pruning), which ripgrep's file globs do not give",
  },
  'fs/open': { noVerb: HANDLES_NO_VERB, noTool: HANDLES_NO_TOOL },
  'fs/readBlock': { noVerb: HANDLES_NO_VERB, noTool: HANDLES_NO_TOOL },
  'fs/writeBlock': { noVerb: HANDLES_NO_VERB, noTool: HANDLES_NO_TOOL },
  'fs/close': { noVerb: HANDLES_NO_VERB, noTool: HANDLES_NO_TOOL },
  'fs/rename': { verb: 'mv', tool: 'move_file' },
  'fs/batch': { verb: 'call', tool: 'read_multiple_files' },
  'fs/explainAccess': {
    verb: 'why',
    noTool:
      'the allowed directories are the whole policy of an MCP server; list_allowed_directories shows them',
  },
  'environment/info': { noVerb: ENVIRONMENT_NO_VERB, noTool: PROCESS_NO_TOOL },
  'environment/status': { noVerb: ENVIRONMENT_NO_VERB, noTool: PROCESS_NO_TOOL },
  'process/start': { noVerb: PROCESS_NO_VERB, noTool: PROCESS_NO_TOOL },
  'process/read': { noVerb: PROCESS_NO_VERB, noTool: PROCESS_NO_TOOL },
  'process/write': { noVerb: PROCESS_NO_VERB, noTool: PROCESS_NO_TOOL },
  'process/signal': { noVerb: PROCESS_NO_VERB, noTool: PROCESS_NO_TOOL },
  'process/terminate': { noVerb: PROCESS_NO_VERB, noTool: PROCESS_NO_TOOL },
  'fs/applyPatch': { verb: 'apply-patch', tool: 'apply_patch' },
};

/** Arguments each tool accepts (by its own input schema), for finding the method it calls first. */
const TOOL_ARGS: Readonly<Record<string, Record<string, unknown>>> = {
  read_multiple_files: { paths: ['a.txt'] },
  write_file: { path: 'a.txt', content: 'x' },
  edit_file: { path: 'a.txt', edits: [{ oldText: 'x', newText: 'y' }] },
  move_file: { source: 'a.txt', destination: 'b.txt' },
  search_content: { path: '.', pattern: 'x' },
  search_files: { path: '.', pattern: '*' },
  apply_patch: { patch: '*** Begin Patch\n*** End Patch\n' },
};

/** The method a tool's run sends first: the scope records it and stops the run there. */
async function firstMethodOf(tool: (typeof MCP_TOOLS)[number], directories: AllowedDirectories) {
  const sent: string[] = [];
  const stop = new Error('stopped at the first call');
  const scope: McpScope = {
    directories,
    call: async (method) => {
      sent.push(method);
      throw stop;
    },
  };
  const args = z.object(tool.inputSchema).parse(TOOL_ARGS[tool.name] ?? { path: 'a.txt' });
  await tool.run(args, scope).catch((error: unknown) => {
    if (error !== stop) throw error;
  });
  return sent[0] ?? null;
}

let root: string;
let directories: AllowedDirectories;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'method-surfaces-'));
  directories = AllowedDirectories.resolve([root], root, 'linux', () => {});
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('every exposed method has a CLI verb and an MCP tool, or a reason for none', () => {
  it('lists exactly the exposed methods', () => {
    expect(Object.keys(SURFACES).sort()).toEqual(METHODS.filter(isExposedMethod).sort());
  });

  it.each(Object.entries(SURFACES).filter(([, decision]) => 'verb' in decision))(
    '%s: its verb sends it',
    (method, decision) => {
      const verb = (decision as { verb: string }).verb;
      expect(Object.keys(VERBS)).toContain(verb);
      if (verb === 'call') {
        expect(isFsMethod(method)).toBe(true);
        return;
      }
      const source = readFileSync(new URL(`../src/cli/${verb}-command.ts`, import.meta.url), 'utf8');
      expect(source).toContain(`'${method}'`);
    },
  );

  it.each(Object.entries(SURFACES).filter(([, decision]) => 'tool' in decision))(
    '%s: its tool sends it first',
    async (method, decision) => {
      const tool = MCP_TOOLS.find((candidate) => candidate.name === (decision as { tool: string }).tool);
      expect(tool, `an MCP tool ${(decision as { tool: string }).tool}`).toBeDefined();
      expect(await firstMethodOf(tool as (typeof MCP_TOOLS)[number], directories)).toBe(method);
    },
  );

  it('every reason for none is written out', () => {
    for (const decision of Object.values(SURFACES)) {
      if ('noVerb' in decision) expect(decision.noVerb.length).toBeGreaterThan(20);
      if ('noTool' in decision) expect(decision.noTool.length).toBeGreaterThan(20);
    }
  });
});
