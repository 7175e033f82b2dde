import {
  FsError,
  joinPath,
  LIMITS,
  pathUriToNative,
  type ResultOf,
  relativeSegments,
} from '@fs-sandbox/policy';
import { z } from 'zod';
import {
  directoryLines,
  fileInfoLines,
  globMatcher,
  type SizedEntry,
  sizedDirectoryLines,
  type TreeWalkEntry,
  treeExcluder,
  treeJson,
  withoutExcluded,
} from './listing-format.js';
import { textResult } from './tool-result.js';
import { defineTool, type McpScope, READ_ONLY } from './tool-spec.js';

const onePath = { path: z.string() };
const excludePatterns = z.array(z.string()).optional().default([]);

/**
 * Every entry under `root` (one sandboxed walk, links not followed), by segments below it. A tree
 * past the walk's bounds is refused whole, as the reference refuses one past its 100 000 entries
 * (`tool` names the caller, as its refusal does); never listed in part.
 */
async function walkBelow(
  tool: string,
  root: string,
  scope: McpScope,
  depth?: number,
): Promise<TreeWalkEntry[]> {
  const { os } = scope.directories;
  const rootNative = scope.directories.nativePath(root);
  // Links stay in the listing (as the reference's readdir shows them), typed as files. A depth
  // keeps the walk from reading below it.
  const walk = await scope.call('fs/walk', {
    path: scope.directories.uri(root),
    options: { includeSymlinks: true, ...(depth === undefined ? {} : { maxDepth: depth }) },
  });
  const failure = walk.errors[0];
  if (failure !== undefined)
    throw new FsError('io_error', `${pathUriToNative(failure.path, os)}: ${failure.message}`);
  if (walk.truncated)
    throw new FsError(
      'invalid_request',
      `${tool} stopped at the walk's bounds (${LIMITS.walkMaxEntries} entries, ${LIMITS.walkMaxDirectories} directories, depth ${LIMITS.walkMaxDepth}) under ${rootNative}, without finishing. Narrow the path (excludePatterns filter the walk's result, they do not shorten it).`,
    );
  return walk.entries.flatMap((entry) => {
    const segments = relativeSegments(os, pathUriToNative(entry.path, os), rootNative);
    return segments === null || segments.length === 0 || segments.length > (depth ?? Number.POSITIVE_INFINITY)
      ? []
      : [{ segments, isDirectory: entry.kind === 'directory' }];
  });
}

async function listing(path: string, scope: McpScope): Promise<ResultOf<'fs/readDirectory'>> {
  return scope.call('fs/readDirectory', { path: scope.directories.uri(path) });
}

/** The line saying a listing stopped at the helper's bound, so nothing is left out silently. */
const cutNote = (result: ResultOf<'fs/readDirectory'>) =>
  result.truncated ? `\n(listing stopped after ${LIMITS.readDirectoryMaxEntries} entries)` : '';

async function sizesOf(path: string, names: readonly string[], scope: McpScope): Promise<number[]> {
  const { os } = scope.directories;
  const directory = scope.directories.nativePath(path);
  const sizes: number[] = [];
  for (let start = 0; start < names.length; start += LIMITS.batchMaxOperations) {
    const operations = names.slice(start, start + LIMITS.batchMaxOperations).map((name) => ({
      method: 'fs/getMetadata',
      params: { path: scope.directories.uri(joinPath(os, directory, name)) },
    }));
    const { results } = await scope.call('fs/batch', { operations });
    for (const outcome of results)
      sizes.push('result' in outcome ? (outcome.result as ResultOf<'fs/getMetadata'>).size : 0);
  }
  return sizes;
}

export const TREE_TOOLS = [
  defineTool({
    name: 'create_directory',
    title: 'Create Directory',
    description:
      'Create a directory and any missing parents; an existing directory is fine. Only inside the allowed directories.',
    inputSchema: onePath,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    async run(args, scope) {
      await scope.call('fs/createDirectory', { path: scope.directories.uri(args.path), recursive: true });
      return textResult(`Successfully created directory ${args.path}`);
    },
  }),
  defineTool({
    name: 'list_directory',
    title: 'List Directory',
    description:
      'List the entries of a directory, one a line, each marked [FILE] or [DIR]. Only inside the allowed directories.',
    inputSchema: onePath,
    annotations: READ_ONLY,
    async run(args, scope) {
      const result = await listing(args.path, scope);
      return textResult(directoryLines(result.entries) + cutNote(result));
    },
  }),
  defineTool({
    name: 'list_directory_with_sizes',
    title: 'List Directory with Sizes',
    description:
      'List the entries of a directory with [FILE]/[DIR] marks and file sizes, sorted by name or by size, then the ' +
      'totals. Only inside the allowed directories.',
    inputSchema: {
      path: z.string(),
      sortBy: z.enum(['name', 'size']).optional().default('name').describe('Sort entries by name or size'),
    },
    annotations: READ_ONLY,
    async run(args, scope) {
      const result = await listing(args.path, scope);
      const sizes = await sizesOf(
        args.path,
        result.entries.map((entry) => entry.fileName),
        scope,
      );
      const entries: SizedEntry[] = result.entries.map((entry, index) => ({
        name: entry.fileName,
        isDirectory: entry.isDirectory,
        size: sizes[index] ?? 0,
      }));
      return textResult(sizedDirectoryLines(entries, args.sortBy) + cutNote(result));
    },
  }),
  defineTool({
    name: 'directory_tree',
    title: 'Directory Tree',
    description:
      "A recursive tree of a directory as JSON (2-space indentation): each entry has 'name' and 'type' (file or " +
      "directory), directories a 'children' array. excludePatterns drop entries (a pattern with * as a glob on the " +
      'relative path, any other as a name at any depth). Only inside the allowed directories.',
    inputSchema: {
      path: z.string(),
      excludePatterns,
      depth: z
        .number()
        .int()
        .positive()
        .optional()
        .describe(
          'How many levels to descend: 1 lists only the entries directly in path. Directories at the last level have no children array. Omit for the whole tree.',
        ),
    },
    annotations: READ_ONLY,
    async run(args, scope) {
      const entries = withoutExcluded(
        await walkBelow('directory_tree', args.path, scope, args.depth),
        treeExcluder(args.excludePatterns, scope.directories.os),
      );
      return textResult(treeJson(entries, args.depth));
    },
  }),
  defineTool({
    name: 'move_file',
    title: 'Move File',
    description:
      'Move or rename a file or directory. An existing destination is never replaced: the move is refused. Both ' +
      'paths inside the allowed directories.',
    inputSchema: { source: z.string(), destination: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
    async run(args, scope) {
      await scope.call('fs/rename', {
        sourcePath: scope.directories.uri(args.source),
        destinationPath: scope.directories.uri(args.destination),
        overwrite: false,
      });
      return textResult(`Successfully moved ${args.source} to ${args.destination}`);
    },
  }),
  defineTool({
    name: 'copy_file',
    title: 'Copy File',
    description:
      'Copy one regular file to a new location without reading it into the conversation; directories are not ' +
      'copied. An existing destination is never replaced: the copy is refused. Both paths inside the allowed ' +
      'directories.',
    inputSchema: {
      source: z.string().describe('The file to copy'),
      destination: z.string().describe('Where to create the copy; nothing may exist there yet'),
    },
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    async run(args, scope) {
      const sourcePath = scope.directories.uri(args.source);
      const destinationPath = scope.directories.uri(args.destination);
      const source = await scope.call('fs/getMetadata', { path: sourcePath });
      if (!source.isFile)
        throw new FsError(
          source.isDirectory ? 'is_directory' : 'not_regular_file',
          `${args.source} is not a regular file: only files are copied`,
        );
      // A link is copied as the file it leads to, as the reference copies a path's real location
      // (fs/copy alone would recreate the link); that location must lie in the allowed directories
      // too. Should the real path be swapped for a link meanwhile, fs/copy copies that link as a
      // link: it never follows one.
      const from = source.isSymlink
        ? scope.directories.uri(
            pathUriToNative(
              (await scope.call('fs/canonicalize', { path: sourcePath })).path,
              scope.directories.os,
            ),
          )
        : sourcePath;
      // Never over an existing destination: the helper claims the name when the copy lands
      // (link(2) fails if anything is there at that instant), so nothing created meanwhile is replaced.
      await scope.call('fs/copy', {
        sourcePath: from,
        destinationPath,
        recursive: false,
        overwrite: false,
      });
      return textResult(`Successfully copied ${args.source} to ${args.destination}`);
    },
  }),
  defineTool({
    name: 'search_files',
    title: 'Search Files',
    description:
      "Find files and directories whose path relative to 'path' matches a glob ('*.ts' in that directory, " +
      "'**/*.ts' at any depth); excludePatterns drop matching entries and everything below them. Returns full " +
      'paths, one a line. Only inside the allowed directories.',
    inputSchema: { path: z.string(), pattern: z.string(), excludePatterns },
    annotations: READ_ONLY,
    async run(args, scope) {
      const root = scope.directories.nativePath(args.path);
      const { os } = scope.directories;
      const matches = globMatcher([args.pattern], os);
      const found = withoutExcluded(
        await walkBelow('search_files', args.path, scope),
        globMatcher(args.excludePatterns, os),
      )
        .filter((entry) => matches(entry.segments.join('/')))
        .map((entry) => joinPath(scope.directories.os, root, ...entry.segments));
      return textResult(found.length > 0 ? found.join('\n') : 'No matches found');
    },
  }),
  defineTool({
    name: 'get_file_info',
    title: 'Get File Info',
    description:
      'Size, creation and modification times and kind of a file or directory, one `key: value` a line. Only ' +
      'inside the allowed directories.',
    inputSchema: onePath,
    annotations: READ_ONLY,
    async run(args, scope) {
      return textResult(
        fileInfoLines(await scope.call('fs/getMetadata', { path: scope.directories.uri(args.path) })),
      );
    },
  }),
  defineTool({
    name: 'list_allowed_directories',
    title: 'List Allowed Directories',
    description:
      'The directories this server may reach (and everything below them). The sandbox of every call is built from them.',
    inputSchema: {},
    annotations: READ_ONLY,
    async run(_args, scope) {
      const { directories, readOnly } = scope.directories;
      // The read-only directories follow in the reference's words, so a client can tell before it writes.
      const marked =
        readOnly.length === 0
          ? ''
          : `\n\nRead-only directories (writes refused, whatever the allowed directories in force):\n${readOnly.map((directory) => `  ${directory}`).join('\n')}`;
      return textResult(`Allowed directories:\n${directories.join('\n')}${marked}`);
    },
  }),
];
