import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeText } from '@fs-sandbox/helper';
import { FsError, isFsError, LIMITS, type ResultOf } from '@fs-sandbox/policy';
import { z } from 'zod';
import { FILE_MIME_TYPES } from './file-resources.js';
import { applyLooseEdits, fencedDiff, toLf } from './text-edits.js';
import { textResult } from './tool-result.js';
import { defineTool, type McpScope, READ_ONLY } from './tool-spec.js';

const headTail = {
  path: z.string(),
  tail: z.number().optional().describe('If provided, returns only the last N lines of the file'),
  head: z.number().optional().describe('If provided, returns only the first N lines of the file'),
};

async function readText(args: { path: string; head?: number; tail?: number }, scope: McpScope) {
  if (args.head && args.tail)
    throw new FsError('invalid_params', 'Cannot specify both head and tail parameters simultaneously');
  const window = args.head ? { head: args.head } : args.tail ? { tail: args.tail } : {};
  const read = await scope.call('fs/readTextFile', { path: scope.directories.uri(args.path), ...window });
  refuseCut(args.path, read);
  // A window of lines ends without its last line ending, as the reference joins them.
  const text = args.head || args.tail ? read.content.replace(/\n$/, '') : read.content;
  return textResult(text);
}

function refuseCut(path: string, read: ResultOf<'fs/readTextFile'>): void {
  if (read.truncated)
    throw new FsError(
      'file_too_large',
      `${path} has more than ${LIMITS.textMaxBytes} bytes of text; read it in parts with head or tail`,
    );
}

/** read_media_file's types: the resources' images (but an icon) and audio, as the reference's. */
const MEDIA_TYPES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(FILE_MIME_TYPES).filter(
    ([extension, type]) => /^(image|audio)\//.test(type) && extension !== '.ico',
  ),
);

const mediaBlock = z.union([
  z.object({ type: z.enum(['image', 'audio']), data: z.string(), mimeType: z.string() }),
  z.object({
    type: z.literal('resource'),
    resource: z.object({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() }),
  }),
]);

type MediaBlock = z.infer<typeof mediaBlock>;

const readTextDescription =
  'Read a text file (UTF-8, or UTF-16 with a byte-order mark) whole, or only its first N lines (head) or last N lines (tail). ' +
  'The read runs in a kernel sandbox confined to the allowed directories.';

export const FILE_TOOLS = [
  defineTool({
    name: 'read_file',
    title: 'Read File (Deprecated)',
    description: 'Read a text file. DEPRECATED: use read_text_file, which does the same.',
    inputSchema: headTail,
    annotations: READ_ONLY,
    run: readText,
  }),
  defineTool({
    name: 'read_text_file',
    title: 'Read Text File',
    description: readTextDescription,
    inputSchema: headTail,
    annotations: READ_ONLY,
    run: readText,
  }),
  defineTool({
    name: 'read_media_file',
    title: 'Read Media File',
    description:
      'Read a file as base64 with its MIME type (from its extension): images and audio as image/audio content, ' +
      'anything else as an embedded resource. Only inside the allowed directories.',
    inputSchema: { path: z.string() },
    outputSchema: { content: z.array(mediaBlock), errorKind: z.string().optional() },
    annotations: READ_ONLY,
    async run(args, scope) {
      const native = scope.directories.nativePath(args.path);
      const { dataBase64 } = await scope.call('fs/readFile', { path: scope.directories.uri(args.path) });
      const data = Buffer.from(dataBase64).toString('base64');
      const mimeType = MEDIA_TYPES[extname(native).toLowerCase()] ?? 'application/octet-stream';
      const kind = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : null;
      const block: MediaBlock =
        kind !== null
          ? { type: kind, data, mimeType }
          : {
              type: 'resource' as const,
              resource: { uri: pathToFileURL(native).href, mimeType, blob: data },
            };
      return { content: [block], structuredContent: { content: [block] } };
    },
  }),
  defineTool({
    name: 'read_multiple_files',
    title: 'Read Multiple Files',
    description:
      'Read several text files in one sandboxed run. Each file comes back under its path; a file that cannot be read ' +
      'shows its error in its place without failing the others.',
    inputSchema: {
      paths: z
        .array(z.string())
        .min(1)
        .describe(
          'Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.',
        ),
    },
    annotations: READ_ONLY,
    async run(args, scope) {
      const parts: string[] = [];
      for (let start = 0; start < args.paths.length; start += LIMITS.batchMaxOperations) {
        parts.push(...(await readBatch(args.paths.slice(start, start + LIMITS.batchMaxOperations), scope)));
      }
      return textResult(parts.join('\n---\n'));
    },
  }),
  defineTool({
    name: 'write_file',
    title: 'Write File',
    description:
      'Create a file or replace an existing one with the given text (UTF-8), atomically: readers see the old file or ' +
      'the new one, never a part. Overwrites without warning. Only inside the allowed directories, never a protected name.',
    inputSchema: { path: z.string(), content: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
    async run(args, scope) {
      const dataBase64 = Buffer.from(args.content, 'utf8').toString('base64');
      await scope.call('fs/writeFile', { path: scope.directories.uri(args.path), dataBase64 });
      return textResult(`Successfully wrote to ${args.path}`);
    },
  }),
  defineTool({
    name: 'append_file',
    title: 'Append File',
    description:
      'Append text to the end of a file, creating it if it does not exist; the existing content is never changed. ' +
      'The text is appended exactly as given, with no newline added. Only inside the allowed directories, never a ' +
      'protected name.',
    inputSchema: {
      path: z
        .string()
        .describe(
          'The file to append to; it is created if it does not exist. Absolute, or relative to an allowed directory; it must resolve inside the allowed directories.',
        ),
      content: z
        .string()
        .describe(
          'Text to append, exactly as given. No newline is added: end it with \\n if the next append should start on a new line.',
        ),
    },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
    async run(args, scope) {
      const path = scope.directories.uri(args.path);
      const added = Buffer.from(args.content, 'utf8');
      const before = await scope.call('fs/readFile', { path }).then(
        (read) => Buffer.from(read.dataBase64),
        (error: unknown) => {
          if (isFsError(error) && error.kind === 'not_found') return null;
          throw error;
        },
      );
      // The whole file is replaced atomically, and only if it is still the one read (its hash), or
      // still absent: an append never loses a write made in between, it fails (hash_mismatch,
      // file_already_exists) and changes nothing.
      const guard =
        before === null
          ? { mode: 'create' as const }
          : { expectedSha256: createHash('sha256').update(before).digest('hex') };
      const data = before === null ? added : Buffer.concat([before, added]);
      await scope.call('fs/writeFile', { path, dataBase64: data.toString('base64'), ...guard });
      return textResult(`Successfully appended to ${args.path}`);
    },
  }),
  defineTool({
    name: 'edit_file',
    title: 'Edit File',
    description:
      'Replace texts in a text file and return a git-style diff. Each oldText is matched exactly first, else line by ' +
      'line ignoring leading and trailing whitespace (the file keeps its indentation). All edits or none; the file ' +
      'is replaced atomically and only if nobody changed it since it was read. dryRun shows the diff and writes nothing.',
    inputSchema: {
      path: z.string(),
      edits: z.array(
        z.object({
          oldText: z.string().describe('Text to search for - must match exactly'),
          newText: z.string().describe('Text to replace with'),
        }),
      ),
      dryRun: z.boolean().default(false).describe('Preview changes using git-style diff format'),
    },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
    async run(args, scope) {
      const path = scope.directories.uri(args.path);
      const read = await scope.call('fs/readTextFile', { path });
      refuseCut(args.path, read);
      // A whole read answers within the text cap with a hash; without one the write could not be checked.
      if (read.sha256 === undefined)
        throw new FsError(
          'file_too_large',
          `${args.path} is larger than ${LIMITS.textMaxBytes} bytes: too large to edit`,
        );
      const before = toLf(read.content);
      const after = applyLooseEdits(before, args.edits);
      const diff = fencedDiff(before, after, scope.directories.nativePath(args.path));
      if (!args.dryRun && after !== before) {
        // A CRLF file stays CRLF; the hash makes the write refuse a file changed since the read.
        const text = read.lineEnding === 'crlf' ? after.replaceAll('\n', '\r\n') : after;
        const dataBase64 = encodeText(text, read.encoding, read.bom).toString('base64');
        await scope.call('fs/writeFile', { path, dataBase64, expectedSha256: read.sha256 });
      }
      return textResult(diff);
    },
  }),
];

async function readBatch(paths: readonly string[], scope: McpScope): Promise<string[]> {
  const operations: { method: string; params: Record<string, unknown> }[] = [];
  const refusals = new Map<number, string>();
  paths.forEach((path, index) => {
    try {
      operations.push({ method: 'fs/readTextFile', params: { path: scope.directories.uri(path) } });
    } catch (error) {
      refusals.set(index, (error as Error).message);
    }
  });
  const { results } = operations.length > 0 ? await scope.call('fs/batch', { operations }) : { results: [] };
  let next = 0;
  return paths.map((path, index) => {
    const refusal = refusals.get(index);
    if (refusal !== undefined) return `${path}: Error - ${refusal}`;
    const outcome = results[next++];
    if (outcome === undefined) return `${path}: Error - internal_error: no reply for this file`;
    if ('error' in outcome)
      return `${path}: Error - ${outcome.error.data.errorKind}: ${outcome.error.message}`;
    const read = outcome.result as ResultOf<'fs/readTextFile'>;
    if (read.truncated)
      return `${path}: Error - file_too_large: more than ${LIMITS.textMaxBytes} bytes of text`;
    return `${path}:\n${read.content}\n`;
  });
}
