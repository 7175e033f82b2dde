import { FsError } from '../error-kinds.js';
import type { HostOs } from '../host-os.js';
import { pathUriToNative } from '../path-uri.js';
import { minimalReadRootCandidates } from '../platform-roots.js';
import type { FileSystemEntry } from '../schemas/sandbox-context.js';
import { parseDenyGlob } from './glob-match.js';

/** What one policy entry covers, in native terms. */
export type EntryScope =
  /** `root`: every path, at depth 0. */
  | { kind: 'everything' }
  /** Whole subtrees rooted at these native absolute paths. */
  | { kind: 'paths'; paths: string[] }
  /** An absolute deny-only glob. */
  | { kind: 'glob'; pattern: string }
  /** Grants and denies nothing (unknown special kinds; glob entries that are not deny). */
  | { kind: 'nothing' };

/** `/tmp` is a POSIX notion; Windows has no fixed equivalent, so `slash_tmp` covers nothing there. */
function slashTmp(os: HostOs): string[] {
  return os === 'windows' ? [] : ['/tmp'];
}

/**
 * The scope of an entry of a *resolved* profile. `project_roots` and `tmpdir` depend on the
 * context and must have been materialised by resolveSandboxContext; meeting one here means a caller
 * skipped resolution, and guessing would either grant or fail to deny, so it is an error.
 */
export function entryScope(entry: FileSystemEntry, os: HostOs): EntryScope {
  const path = entry.path;
  switch (path.type) {
    case 'path':
      return { kind: 'paths', paths: [pathUriToNative(path.path, os)] };
    case 'glob_pattern':
      // Refused here too (not only in resolveSandboxContext), so no caller meets a glob it cannot enforce.
      parseDenyGlob(path.pattern, os);
      // Glob entries only ever deny: the reference does not grant reads through them either.
      return entry.access === 'deny' ? { kind: 'glob', pattern: path.pattern } : { kind: 'nothing' };
    case 'special':
      switch (path.value.kind) {
        case 'root':
          return { kind: 'everything' };
        case 'minimal':
          return { kind: 'paths', paths: minimalReadRootCandidates(os) };
        case 'slash_tmp':
          return { kind: 'paths', paths: slashTmp(os) };
        case 'unknown':
          return { kind: 'nothing' };
        case 'project_roots':
        case 'tmpdir':
          throw new FsError(
            'internal_error',
            `policy entry \`${path.value.kind}\` must be resolved against the sandbox context before use`,
          );
      }
  }
}

/** A short human label for the entry, used in denial messages ("denied by entry file:///w/.env:deny"). */
export function entryLabel(entry: FileSystemEntry): string {
  const path = entry.path;
  if (path.type === 'path') return `${path.path}:${entry.access}`;
  if (path.type === 'glob_pattern') return `${path.pattern}:${entry.access}`;
  return `${path.value.kind}:${entry.access}`;
}
