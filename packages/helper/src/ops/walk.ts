import type { Stats } from 'node:fs';
import type { HelperParamsOf, HelperResultOf } from '@fs-sandbox/policy';
import {
  assertWalkLimits,
  childPath,
  fsPathArg,
  type HostOs,
  LIMITS,
  nativeToPathUri,
} from '@fs-sandbox/policy/core';
import { lstat, stat } from '../fs-async.js';
import { byNameBytes, type ListedEntry, listDirectory } from '../list-directory.js';
import type { Operation } from '../operation.js';
import { fromOsError } from '../os-error.js';
import { pathParam, requiredBoolean, requiredCount, requiredObject } from '../params.js';

type WalkOptions = HelperParamsOf<'fs/walk'>['options'];
type WalkResult = HelperResultOf<'fs/walk'>;
type WalkEntry = WalkResult['entries'][number];

// JSON framing around each item's path (and message) when counting the response size: `{"path":"","kind":"directory"},`.
const ITEM_OVERHEAD_BYTES = 32;

interface Visit {
  path: string;
  depth: number;
}

/** Type of a name after following a symlink, plus whether the name itself is one. Null when unreadable. */
interface EntryFacts {
  stats: Stats | null;
  isDirectory: boolean;
  isFile: boolean;
  isSymlink: boolean;
}

class WalkCollector {
  readonly result: WalkResult = { entries: [], errors: [], truncated: false };
  private bytes = 0;

  constructor(private readonly os: HostOs) {}

  /** False (and `truncated`) once the response would pass LIMITS.walkMaxResponseBytes. */
  private reserve(bytes: number): boolean {
    if (this.bytes + bytes + ITEM_OVERHEAD_BYTES > LIMITS.walkMaxResponseBytes) {
      this.result.truncated = true;
      return false;
    }
    this.bytes += bytes + ITEM_OVERHEAD_BYTES;
    return true;
  }

  entry(path: string, kind: WalkEntry['kind']): boolean {
    const uri = nativeToPathUri(path, this.os);
    if (!this.reserve(Buffer.byteLength(uri))) return false;
    this.result.entries.push({ path: uri, kind });
    return true;
  }

  error(path: string, error: unknown): boolean {
    const uri = nativeToPathUri(path, this.os);
    const message = error instanceof Error ? error.message : String(error);
    if (!this.reserve(Buffer.byteLength(uri) + Buffer.byteLength(message))) return false;
    this.result.errors.push({ path: uri, message });
    return true;
  }
}

async function factsOf(path: string, listed: ListedEntry['type']): Promise<EntryFacts> {
  // The directory entry's own type saves a syscall for plain files; directories need a stat for
  // their device/inode (cycle detection), symlinks and unknown types for what they are.
  if (listed === 'file') return { stats: null, isDirectory: false, isFile: true, isSymlink: false };
  try {
    const own = listed === 'symlink' ? null : await lstat(fsPathArg(path));
    const isSymlink = own === null || own.isSymbolicLink();
    const stats = isSymlink ? await stat(fsPathArg(path)) : own;
    return { stats, isDirectory: stats.isDirectory(), isFile: stats.isFile(), isSymlink };
  } catch (error) {
    throw fromOsError(error, path);
  }
}

/**
 * Breadth-first walk below `root`, names sorted by their bytes, bounded by the caller's limits and
 * LIMITS.walkMaxResponseBytes (`truncated` says a limit cut it short). Symlinked directories are
 * only entered with `followDirectorySymlinks`. Every other link (to a file, dangling, looping, or to
 * a directory not followed) is left out, as the reference does: its client knows two entry kinds,
 * `file` and `directory`, and one more would fail the whole reply there. `includeSymlinks` asks for
 * those links as `symlink` entries instead. Every directory is entered at most once by
 * device/inode, so link cycles (and looping mounts) end.
 */
export async function walkAt(root: string, options: WalkOptions, os: HostOs): Promise<WalkResult> {
  const collector = new WalkCollector(os);
  const rootFacts = await factsOf(root, 'unknown');
  if (!rootFacts.isDirectory || (rootFacts.isSymlink && !options.followDirectorySymlinks))
    return collector.result;
  const rootStats = rootFacts.stats as Stats;
  const visited = new Set([`${rootStats.dev}:${rootStats.ino}`]);
  const queue: (Visit | undefined)[] = [{ path: root, depth: 0 }];
  let directories = 1;
  let entries = 0;
  for (let head = 0; head < queue.length; head++) {
    const visit = queue[head] as Visit;
    queue[head] = undefined;
    let listed: ListedEntry[];
    try {
      const listing = await listDirectory(visit.path, LIMITS.readDirectoryMaxEntries);
      if (listing.truncated) collector.result.truncated = true;
      listed = listing.entries.sort(byNameBytes);
    } catch (error) {
      if (!collector.error(visit.path, error)) return collector.result;
      continue;
    }
    for (const entry of listed) {
      if (entries === options.maxEntries) {
        collector.result.truncated = true;
        return collector.result;
      }
      entries += 1;
      const path = childPath(os, visit.path, entry.name);
      let facts: EntryFacts;
      try {
        facts = await factsOf(path, entry.type);
      } catch (error) {
        // A dangling (or unreadable) link is still a link, not a failure: left out, or listed as one.
        if (entry.type === 'symlink') {
          if (options.includeSymlinks && !collector.entry(path, 'symlink')) return collector.result;
          continue;
        }
        if (!collector.error(path, error)) return collector.result;
        continue;
      }
      if (facts.isSymlink && !(options.followDirectorySymlinks && facts.isDirectory)) {
        if (options.includeSymlinks && !collector.entry(path, 'symlink')) return collector.result;
        continue;
      }
      if (!facts.isDirectory && !facts.isFile) continue;
      if (!collector.entry(path, facts.isDirectory ? 'directory' : 'file')) return collector.result;
      if (!facts.isDirectory || visit.depth >= options.maxDepth) continue;
      if (options.pruneHiddenDirectories && entry.name.startsWith('.')) continue;
      const stats = facts.stats as Stats;
      const identity = `${stats.dev}:${stats.ino}`;
      if (visited.has(identity)) continue;
      visited.add(identity);
      if (directories === options.maxDirectories) {
        collector.result.truncated = true;
        continue;
      }
      directories += 1;
      queue.push({ path, depth: visit.depth + 1 });
    }
  }
  return collector.result;
}

function parseWalkOptions(raw: Record<string, unknown>): WalkOptions {
  const options: WalkOptions = {
    maxDepth: requiredCount(raw, 'maxDepth'),
    maxDirectories: requiredCount(raw, 'maxDirectories'),
    maxEntries: requiredCount(raw, 'maxEntries'),
    followDirectorySymlinks: requiredBoolean(raw, 'followDirectorySymlinks'),
    pruneHiddenDirectories: requiredBoolean(raw, 'pruneHiddenDirectories'),
    includeSymlinks: requiredBoolean(raw, 'includeSymlinks'),
  };
  assertWalkLimits(options);
  return options;
}

export const walkOperation: Operation<'fs/walk'> = {
  parse: (raw, os) => ({
    path: pathParam(raw, 'path', os),
    options: parseWalkOptions(requiredObject(raw, 'options')),
  }),
  async run({ path, options }, context) {
    return { response: await walkAt(path, options, context.os) };
  },
};
