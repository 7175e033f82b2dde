import { Buffer } from 'node:buffer';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ErrorKind, isFsError } from '@fs-sandbox/policy';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpScope } from './tool-spec.js';

/** The URI template every file resource matches, the reference's (RFC 6570 reserved expansion). */
export const FILE_RESOURCE_TEMPLATE = 'file://{+path}';

/** MIME types by lowercase extension, the reference's table; anything else is sniffed (below). */
export const FILE_MIME_TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/typescript',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.ico': 'image/x-icon',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.mp4': 'video/mp4',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
};

/** MIME types outside text/* whose content is still text. */
const TEXTUAL_MIME_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'image/svg+xml',
]);

/** JSON-RPC codes of a failed read, as the reference answers them. */
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/**
 * A missing file (or a directory, which is no resource) is "resource not found", which the current
 * MCP revision spells -32602 with the URI in the data (no longer -32002), as the reference's SDK
 * does; a path the allowed directories or the sandbox refuse is the request's fault too; anything
 * else is the server's.
 */
const REQUEST_FAULTS: ReadonlySet<ErrorKind> = new Set([
  'not_found',
  'is_directory',
  'permission_denied',
  'invalid_params',
  'symlink_escape',
]);

/** The bytes as UTF-8 text, or undefined when they are not (a NUL byte marks binary content). */
function decodeText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Text when the type is textual (or, unknown, the bytes decode as UTF-8), else a base64 blob. */
export function fileResourceContents(
  uri: string,
  path: string,
  bytes: Buffer,
): ReadResourceResult['contents'][number] {
  const known = FILE_MIME_TYPES[extname(path).toLowerCase()];
  if (known === undefined || known.startsWith('text/') || TEXTUAL_MIME_TYPES.has(known)) {
    const text = decodeText(bytes);
    if (text !== undefined) return { uri, mimeType: known ?? 'text/plain', text };
  }
  return { uri, mimeType: known ?? 'application/octet-stream', blob: bytes.toString('base64') };
}

/**
 * Files as MCP resources, as the reference's 2.3.0 has them: one template, `file://{+path}`, and no
 * list (resources/list stays empty, so nothing enumerates the disk). A read goes through the same
 * scope and sandbox as the tools (fs/readFile, bounded like read_media_file), so a resource reaches
 * nothing a tool cannot. A refusal is a JSON-RPC error whose data carries the error kind.
 */
export async function registerFileResources(
  server: McpServer,
  currentScope: () => Promise<McpScope>,
): Promise<void> {
  const [{ ResourceTemplate }, { McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  server.registerResource(
    'file',
    new ResourceTemplate(FILE_RESOURCE_TEMPLATE, { list: undefined }),
    {
      title: 'File',
      description:
        'A file inside the allowed directories, by its absolute file:// URI (for example ' +
        'file:///home/user/project/README.md). Text files are returned as text, other files as a base64 ' +
        'blob with their MIME type. Directories are not resources; use the list_directory tool to find files. ' +
        'Each read runs in a kernel sandbox confined to the allowed directories.',
    },
    async (uri) => {
      let path: string;
      try {
        path = fileURLToPath(uri);
      } catch (error) {
        throw new McpError(INVALID_PARAMS, `Invalid file URI ${uri.href}: ${(error as Error).message}`, {
          uri: uri.href,
          errorKind: 'invalid_params',
        });
      }
      const scope = await currentScope();
      try {
        const { dataBase64 } = await scope.call('fs/readFile', { path: scope.directories.uri(path) });
        return { contents: [fileResourceContents(uri.href, path, Buffer.from(dataBase64))] };
      } catch (error) {
        const kind: ErrorKind = isFsError(error) ? error.kind : 'internal_error';
        const message = error instanceof Error ? error.message : String(error);
        const text =
          kind === 'is_directory'
            ? `Not a file: ${uri.href} is a directory; directories are not resources`
            : `${kind}: ${message}`;
        throw new McpError(REQUEST_FAULTS.has(kind) ? INVALID_PARAMS : INTERNAL_ERROR, text, {
          uri: uri.href,
          errorKind: kind,
        });
      }
    },
  );
}
