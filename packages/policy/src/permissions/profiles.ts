import { parsePathUri } from '../path-uri.js';
import type { FileSystemEntry, RestrictedProfile } from '../schemas/sandbox-context.js';

/** Ready-made profiles for callers and tests; paths are URIs and are canonicalised (throws on invalid). */

const ROOT_READ: FileSystemEntry = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };

function restricted(entries: FileSystemEntry[]): RestrictedProfile {
  return { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' };
}

function uriEntries(uris: readonly string[], access: FileSystemEntry['access']): FileSystemEntry[] {
  return uris.map((uri) => ({ path: { type: 'path', path: parsePathUri(uri) }, access }));
}

/** Read anywhere, write nowhere. */
export function readOnlyProfile(): RestrictedProfile {
  return restricted([ROOT_READ]);
}

/** Read anywhere, write inside `writableRoots`, nothing at all inside `deny`. */
export function workspaceWriteProfile(options: {
  writableRoots: string[];
  deny?: string[];
}): RestrictedProfile {
  return restricted([
    ROOT_READ,
    ...uriEntries(options.writableRoots, 'write'),
    ...uriEntries(options.deny ?? [], 'deny'),
  ]);
}
