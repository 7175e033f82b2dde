import { openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { FsError, fsPathArg } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { lstat } from './fs-async.js';
import { isPlainObject } from './params.js';
import type { FreshnessEntry } from './protocol.js';

const DECIMAL = /^\d{1,20}$/;

/** Validates the request's `freshness` list (absent means: no check asked). */
export function parseFreshness(value: unknown): FreshnessEntry[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new FsError('invalid_request', 'helper request `freshness` must be an array');
  return value.map((item) => {
    if (
      !isPlainObject(item) ||
      typeof item.path !== 'string' ||
      typeof item.dev !== 'string' ||
      typeof item.ino !== 'string' ||
      !DECIMAL.test(item.dev) ||
      !DECIMAL.test(item.ino)
    ) {
      throw new FsError(
        'invalid_request',
        'helper request `freshness` entries must be {path, dev, ino} with decimal dev/ino',
      );
    }
    return { path: item.path, dev: item.dev, ino: item.ino };
  });
}

function stale(path: string): FsError {
  return new FsError(
    'helper_failed',
    `sandbox view is stale: ${displayPath(path)} changed since the helper started`,
    {
      stale: true,
    },
  );
}

/**
 * A warm helper's sandbox was built earlier: its bind mounts pin the inodes the roots had then.
 * Before acting, every root the broker sees now must be the same file here (same device and inode,
 * without following a symlink); otherwise the helper refuses and the broker retries with a fresh
 * one. Nothing is touched before this check passes.
 */
export async function checkFreshness(entries: FreshnessEntry[]): Promise<void> {
  for (const entry of entries) {
    const stats = await lstat(fsPathArg(entry.path), { bigint: true }).catch(() => null);
    if (stats === null || stats.dev.toString() !== entry.dev || stats.ino.toString() !== entry.ino) {
      throw stale(entry.path);
    }
  }
}

/** Where a Linux process sees the mounts of its own mount namespace. */
const OWN_MOUNTINFO = '/proc/self/mountinfo';

/**
 * A bind mount or mask sits on a directory entry of the host. When the host removes that entry
 * (replaces a denied directory, a `.git`, a writable root under a read-only `/`), the kernel
 * detaches the mount in every other namespace: a warm helper would then see the new host entry
 * unmasked, and its device/inode may even equal the old one (inode numbers are reused). So before
 * acting, every path the launcher mounted must still be a mount point in this helper's own mount
 * namespace; a missing one makes the helper refuse as stale. Nothing is touched before this passes.
 */
export function checkMountPoints(expected: readonly string[], mountinfo: string = OWN_MOUNTINFO): void {
  if (expected.length === 0) return;
  const mounted = readMountPoints(mountinfo);
  // Without the mount table the view cannot be proven current: refuse (fail closed).
  if (mounted === null) throw stale(expected[0] as string);
  for (const path of expected) {
    // Listed as spelled: the table names each mount point by the directories leading to it now,
    // never through a symlink, so a path it lists leads to that mount (and no syscall is needed).
    if (mounted.has(path)) continue;
    const real = realPathOrNull(path);
    if (real === null || !mounted.has(real)) throw stale(path);
  }
}

/** Every mount point of this process's mount namespace, or null where there is no mount table. */
export function readMountPoints(mountinfo: string = OWN_MOUNTINFO): Set<string> | null {
  const text = mountinfo === OWN_MOUNTINFO ? readOwnMountTable() : readOtherMountTable(mountinfo);
  if (text === null) return null;
  const mounted = new Set<string>();
  for (const line of text.split('\n')) {
    // Fields: id, parent id, major:minor, root, mount point, ... (proc(5)).
    const field = line.split(' ')[4];
    if (field !== undefined) mounted.add(unescapeMountField(field));
  }
  return mounted;
}

/** Largest mount table read; a larger one counts as unreadable (the view cannot be proven current). */
const MOUNT_TABLE_MAX_BYTES = 16 * 1024 * 1024;
let ownMountTable: { fd: number; buffer: Buffer } | null = null;

/**
 * This process's mount table, through one descriptor kept from the first read: a read from offset
 * 0 makes the kernel list the table as it is at that moment (a seq_file), and skips the open's
 * walk through procfs, ~0.1 ms of every warm request. Null when it cannot be read.
 */
function readOwnMountTable(): string | null {
  try {
    ownMountTable ??= { fd: openSync(OWN_MOUNTINFO, 'r'), buffer: Buffer.allocUnsafe(64 * 1024) };
    const table = ownMountTable;
    let filled = 0;
    for (;;) {
      if (filled === table.buffer.length) {
        if (filled * 2 > MOUNT_TABLE_MAX_BYTES) return null;
        const larger = Buffer.allocUnsafe(filled * 2);
        table.buffer.copy(larger);
        table.buffer = larger;
      }
      const count = readSync(table.fd, table.buffer, filled, table.buffer.length - filled, filled);
      if (count === 0) return table.buffer.toString('utf8', 0, filled);
      filled += count;
    }
  } catch {
    return null;
  }
}

function readOtherMountTable(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Where the kernel put the mount: the launcher resolves a mount point through any symlink on the
 * way (a `/lib -> usr/lib` it recreated, a host symlink under a read-only `/`), and the mount table
 * lists the resolved path.
 */
function realPathOrNull(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}

/** The kernel writes space, tab, newline and backslash in mountinfo paths as octal escapes. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_escape, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  );
}
