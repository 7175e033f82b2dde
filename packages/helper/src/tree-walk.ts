import type { BigIntStats } from 'node:fs';
import { childPath, FsError, fsPathArg, type HostOs, isFsError } from '@fs-sandbox/policy/core';
import { type DirectoryAnchor, isNotEnterable, openDirectory } from './directory-anchor.js';
import { displayPath } from './display-path.js';
import { lstat } from './fs-async.js';
import { type ListedEntry, listDirectory } from './list-directory.js';
import { fromOsError, hasErrno } from './os-error.js';

/**
 * A depth-first walk of a directory tree in which every directory is opened through its parent's
 * descriptor without following a symlink (see directory-anchor.ts), so a directory swapped for a
 * link to somewhere else (`sub -> ../keep`) between its listing and its visit is never entered: the
 * walk can only reach what really lies below the directory it started in. Iterative, so a
 * 5 000-level tree needs no call stack; only the directories on the current path are held open.
 */

export interface TreeEntry {
  name: string;
  /** The entry's path as the request spells it (for messages). */
  display: string;
  /** lstat of the entry (a symlink is described, not followed). */
  stats: BigIntStats;
}

export interface TreeVisitor<C> {
  /** A subdirectory, already opened: the context its entries are visited with, or null to skip it. */
  enter(parent: C, entry: TreeEntry, directory: DirectoryAnchor): Promise<C | null>;
  /** An entry that is not a directory, in `directory` (the parent, opened). */
  visit(parent: C, entry: TreeEntry, directory: DirectoryAnchor): Promise<void>;
  /** Every entry of a directory was visited (post-order); `parent` is null for the walk's root. */
  leave(context: C, name: string | null, parent: DirectoryAnchor | null): Promise<void>;
}

export interface TreeWalkOptions {
  os: HostOs;
  /** At most this many entries in the whole walk; more throws `tooMany()`. */
  maxEntries: number;
  tooMany(): FsError;
  /**
   * A directory whose device/inode is already on the current path (a bind mount looping back):
   * skipped, or refused with an error.
   */
  onLoop: 'skip' | 'refuse';
  /** Pass over subdirectories that cannot be opened or listed (masked ones) instead of failing. */
  skipUnreadable?: boolean;
}

interface Frame<C> {
  directory: DirectoryAnchor;
  context: C;
  display: string;
  name: string | null;
  identity: string;
  entries: ListedEntry[];
  next: number;
}

export async function walkTree<C>(
  root: DirectoryAnchor,
  rootDisplay: string,
  rootContext: C,
  visitor: TreeVisitor<C>,
  options: TreeWalkOptions,
): Promise<void> {
  let counted = 0;
  const listing = async (display: string, directory: DirectoryAnchor): Promise<ListedEntry[]> => {
    const listed = await listDirectory(display, options.maxEntries - counted + 1, directory.access);
    counted += listed.entries.length;
    if (counted > options.maxEntries) throw options.tooMany();
    return listed.entries;
  };
  const stack: Frame<C>[] = [];
  const onPath = new Set<string>();
  const unreadable = (error: unknown): boolean =>
    options.skipUnreadable === true && isFsError(error) && error.kind === 'permission_denied';
  const push = async (frame: Omit<Frame<C>, 'entries' | 'next'>): Promise<void> => {
    let entries: ListedEntry[];
    try {
      entries = await listing(frame.display, frame.directory);
    } catch (error) {
      if (frame.directory !== root) await frame.directory.close();
      if (frame.directory !== root && unreadable(error)) return;
      throw error;
    }
    stack.push({ ...frame, entries, next: 0 });
    onPath.add(frame.identity);
  };
  try {
    await push({
      directory: root,
      context: rootContext,
      display: rootDisplay,
      name: null,
      identity: await root.identity(),
    });
    for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
      const item = top.entries[top.next];
      if (item === undefined) {
        stack.pop();
        onPath.delete(top.identity);
        const parent = stack.at(-1)?.directory ?? null;
        try {
          await visitor.leave(top.context, top.name, parent);
        } finally {
          if (top.directory !== root) await top.directory.close();
        }
        continue;
      }
      top.next += 1;
      const display = childPath(options.os, top.display, item.name);
      const stats = await lstatOrNull(top.directory.child(item.name), display);
      if (stats === null) continue;
      const entry: TreeEntry = { name: item.name, display, stats };
      if (!stats.isDirectory()) {
        await visitor.visit(top.context, entry, top.directory);
        continue;
      }
      const identity = `${stats.dev}:${stats.ino}`;
      if (onPath.has(identity)) {
        if (options.onLoop === 'skip') continue;
        throw new FsError(
          'io_error',
          `Refusing to walk into ${displayPath(display)}: it is a mount of a directory above it`,
        );
      }
      const opened = await openDirectory(top.directory.child(item.name), options.os, {
        noFollow: true,
        display,
        physical: childPath(options.os, top.directory.physical, item.name),
      }).catch((error: unknown) => {
        if (isNotEnterable(error)) return null;
        if (unreadable(error)) return undefined;
        throw error;
      });
      if (opened === undefined) continue;
      if (opened === null) {
        // Replaced since the listing (by a link, a file, or nothing): described again, never entered.
        const now = await lstatOrNull(top.directory.child(item.name), display);
        if (now !== null && !now.isDirectory())
          await visitor.visit(top.context, { ...entry, stats: now }, top.directory);
        continue;
      }
      let context: C | null;
      try {
        context = await visitor.enter(top.context, entry, opened);
      } catch (error) {
        await opened.close();
        throw error;
      }
      if (context === null) {
        await opened.close();
        continue;
      }
      await push({ directory: opened, context, display, name: item.name, identity: await opened.identity() });
    }
  } finally {
    for (const frame of stack) if (frame.directory !== root) await frame.directory.close();
  }
}

async function lstatOrNull(access: string, display: string): Promise<BigIntStats | null> {
  try {
    return await lstat(fsPathArg(access), { bigint: true });
  } catch (error) {
    // Removed while we walk: there is nothing left to visit.
    if (hasErrno(error, 'ENOENT')) return null;
    throw fromOsError(error, display);
  }
}
