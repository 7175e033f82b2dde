import { join } from 'node:path';
import { currentHostOs, FsError, pathUriToNative } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, type ShortcutRun, shortcutCommand } from './shortcut.js';
import { localIsoMinute, type Metadata } from './stat-command.js';
import { escapeForTerminal } from './terminal-text.js';

/** `ls -l` makes one fs/getMetadata call per entry (and fs/canonicalize per symlink): at most this many entries. */
export const LS_LONG_MAX_ENTRIES = 1000;
/** …with at most this many calls in flight at once. */
const LS_LONG_CONCURRENCY = 4;

/** What `ls -l` learned about one entry; `metadata` null when fs/getMetadata failed (a dangling link, say). */
export interface LongEntry {
  fileName: string;
  metadata: Metadata | null;
  /** The symlink's resolved path (fs/canonicalize), or null when it could not be resolved. */
  resolved: string | null;
}

/**
 * One `ls -l` line: kind (`d` directory, `-` file, `l` symlink, `?` other or unknown) and mode as
 * ls(1) writes them (a link shows `rwxrwxrwx`, as Linux links always have), size, local modified
 * time, and the name, escaped; a symlink shows `name -> <resolved path>` (`-> ?` if unresolvable).
 */
export function formatLongEntry(entry: LongEntry, sizeWidth: number): string {
  const m = entry.metadata;
  const kind = m === null ? '?' : m.isSymlink ? 'l' : m.isDirectory ? 'd' : m.isFile ? '-' : '?';
  const mode = m === null ? '?????????' : m.isSymlink ? 'rwxrwxrwx' : permissionLetters(m.permissions);
  const size = (m === null ? '?' : String(m.size)).padStart(sizeWidth);
  const time = m === null ? '?'.padEnd(16) : localIsoMinute(m.modifiedAtMs);
  const target = m?.isSymlink
    ? ` -> ${entry.resolved === null ? '?' : escapeForTerminal(entry.resolved)}`
    : '';
  return `${kind}${mode} ${size} ${time} ${escapeForTerminal(entry.fileName)}${target}\n`;
}

/** `0754` as `rwxr-xr--`, with setuid, setgid and sticky shown in the execute places as ls does. */
function permissionLetters(octal: string): string {
  const bits = Number.parseInt(octal, 8);
  const triplet = (shift: number, special: boolean, letter: string) => {
    const r = bits & (4 << shift) ? 'r' : '-';
    const w = bits & (2 << shift) ? 'w' : '-';
    const executable = (bits & (1 << shift)) !== 0;
    const x = special ? (executable ? letter : letter.toUpperCase()) : executable ? 'x' : '-';
    return r + w + x;
  };
  return (
    triplet(6, (bits & 0o4000) !== 0, 's') +
    triplet(3, (bits & 0o2000) !== 0, 's') +
    triplet(0, (bits & 0o1000) !== 0, 't')
  );
}

export function formatLongListing(entries: readonly LongEntry[]): string {
  const width = Math.max(
    1,
    ...entries.map((e) => (e.metadata === null ? 1 : String(e.metadata.size).length)),
  );
  return entries.map((entry) => formatLongEntry(entry, width)).join('');
}

async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function describeEntry(
  run: ShortcutRun,
  directory: string,
  entry: { fileName: string; nonUtf8Name?: true },
): Promise<LongEntry> {
  // A non-UTF-8 name arrives percent-encoded: it has no native string path to ask about.
  if (entry.nonUtf8Name) return { fileName: entry.fileName, metadata: null, resolved: null };
  const path = run.uri(join(directory, entry.fileName));
  const options = { timeoutMs: run.timeoutMs };
  const metadata = await run.broker
    .call('fs/getMetadata', { path, sandbox: run.sandbox }, options)
    .catch(() => null);
  let resolved: string | null = null;
  if (metadata?.isSymlink) {
    // The wire has no readlink: the resolved path is what it can honestly give.
    const canonical = await run.broker
      .call('fs/canonicalize', { path, sandbox: run.sandbox }, options)
      .catch(() => null);
    resolved = canonical === null ? null : pathUriToNative(canonical.path, currentHostOs());
  }
  return { fileName: entry.fileName, metadata, resolved };
}

/**
 * `fs-sandbox ls [-l] PATH`: one entry per line, sorted, directories marked with a trailing `/`.
 * Names are escaped like `ls -b`: a name is chosen by whoever made the file, and must not drive the terminal.
 */
export function registerLsCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'ls'))
    .description(
      `list a directory (fs/readDirectory; -l adds fs/getMetadata per entry, at most ${LS_LONG_MAX_ENTRIES} entries)`,
    )
    .argument('[path]', 'native path', '.')
    .option(
      '-l, --long',
      'kind (d, -, l, ?), size, modified time (local), name; symlinks as name -> resolved path',
    )
    .action((path: string, flags: ShortcutFlags & { json?: boolean; long?: boolean }) =>
      runShortcut(deps, flags, async (run) => {
        const { broker, sandbox, uri, timeoutMs } = run;
        const result = await broker.call('fs/readDirectory', { path: uri(path), sandbox }, { timeoutMs });
        if (flags.json) {
          writeResultJson(deps.io.stdout, result);
          return;
        }
        if (flags.long) {
          const byName = (a: { fileName: string }, b: { fileName: string }) =>
            escapeForTerminal(a.fileName) < escapeForTerminal(b.fileName) ? -1 : 1;
          const entries = [...result.entries].sort(byName);
          if (entries.length > LS_LONG_MAX_ENTRIES) {
            throw new FsError(
              'invalid_params',
              `ls -l looks up at most ${LS_LONG_MAX_ENTRIES} entries and this directory has ${entries.length}; use ls or ls --json`,
            );
          }
          const described = await mapBounded(entries, LS_LONG_CONCURRENCY, (entry) =>
            describeEntry(run, path, entry),
          );
          deps.io.stdout.write(formatLongListing(described));
        } else {
          const names = result.entries
            .map((entry) => `${escapeForTerminal(entry.fileName)}${entry.isDirectory ? '/' : ''}`)
            .sort();
          deps.io.stdout.write(names.map((name) => `${name}\n`).join(''));
        }
        if (result.truncated)
          deps.io.stderr.write('fs-sandbox: ls: the listing was truncated by the server\n');
      }),
    );
}
