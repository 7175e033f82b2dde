import { FsError, pathUriToNative, type WireResultOf } from '@fs-sandbox/policy';
import { z } from 'zod';
import { textResult } from './tool-result.js';
import { defineTool } from './tool-spec.js';

/** Tools the reference lacks, each on one broker method. */
export const EXTRA_TOOLS = [
  defineTool({
    name: 'search_content',
    title: 'Search File Contents',
    description:
      'Search the contents of the files under a directory (or one file) with ripgrep: a regular expression, or a ' +
      'fixed string with fixedStrings. Ignore files are honoured and hidden files skipped. Returns `path:line:text` ' +
      'lines. Only inside the allowed directories.',
    inputSchema: {
      path: z.string(),
      pattern: z.string().describe('A ripgrep regular expression (a literal text with fixedStrings)'),
      fixedStrings: z.boolean().optional().describe('Match the pattern as a literal text'),
      caseSensitive: z.boolean().optional().describe('Default true'),
      include: z.array(z.string()).optional().describe('Globs of the files to search, relative to path'),
      exclude: z.array(z.string()).optional().describe('Globs of the files to skip, relative to path'),
      contextLines: z.number().int().min(0).optional().describe('Lines of context around each match'),
      maxResults: z.number().int().min(1).optional().describe('At most this many matches (default 1000)'),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run(args, scope) {
      const { path, ...options } = args;
      const { os } = scope.directories;
      const result = await scope.call('fs/search', { path: scope.directories.uri(path), ...options });
      const lines = result.matches.flatMap((match) => {
        const file = pathUriToNative(match.path, os);
        return [
          ...(match.before ?? []),
          { lineNumber: match.lineNumber, line: match.line },
          ...(match.after ?? []),
        ].map((line) => `${file}:${line.lineNumber}:${line.line}`);
      });
      if (result.truncated) lines.push(`(stopped after ${result.matches.length} matches; narrow the search)`);
      return textResult(lines.length > 0 ? lines.join('\n') : 'No matches found');
    },
  }),
  defineTool({
    name: 'apply_patch',
    title: 'Apply Patch',
    description:
      'Apply a patch in the Codex apply_patch format (*** Begin Patch / *** Add File: / *** Update File: / ' +
      '*** Delete File: / *** Move to: / @@ chunks / *** End Patch). Relative paths are under the first allowed ' +
      'directory. dryRun checks and computes everything and writes nothing.',
    inputSchema: {
      patch: z.string().describe('The patch text'),
      dryRun: z.boolean().optional().describe('Check the patch, write nothing'),
    },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
    async run(args, scope) {
      const cwd = scope.directories.uri('.');
      // ResultOf flattens the result union; the wire type keeps it.
      const result = (await scope.call('fs/applyPatch', {
        patch: args.patch,
        cwd,
        dryRun: args.dryRun,
      })) as WireResultOf<'fs/applyPatch'>;
      if (result.status === 'needs_approval') throw new FsError('patch_rejected', result.reason);
      return textResult(result.summary);
    },
  }),
  defineTool({
    name: 'delete_file',
    title: 'Delete File',
    description:
      'Delete a file or symlink, or with recursive a directory and everything in it (refused whole if any part may ' +
      'not go). Only inside the allowed directories, never a protected name.',
    inputSchema: {
      path: z.string(),
      recursive: z.boolean().optional().default(false).describe('Delete a directory and its contents'),
    },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
    async run(args, scope) {
      await scope.call('fs/remove', {
        path: scope.directories.uri(args.path),
        recursive: args.recursive,
        force: false,
      });
      return textResult(`Successfully deleted ${args.path}`);
    },
  }),
];
