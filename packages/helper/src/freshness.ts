import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
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
  const text = readMountTable(mountinfo, MOUNT_TABLE_MAX_BYTES);
  // Without the mount table the view cannot be proven current: refuse (fail closed).
  if (text === null) throw stale(expected[0] as string);
  if (lastPassed?.mountinfo === mountinfo && lastPassed.expected === expected && lastPassed.text === text)
    return;
  const mounted = mountPointsOf(text);
  let allAsSpelled = true;
  for (const path of expected) {
    // Listed as spelled: the table names each mount point by the directories leading to it now,
    // never through a symlink, so a path it lists leads to that mount (and no syscall is needed).
    if (mounted.has(path)) continue;
    allAsSpelled = false;
    const real = realPathOrNull(path);
    if (real === null || !mounted.has(real)) throw stale(path);
  }
  if (allAsSpelled) lastPassed = { mountinfo, expected, text };
}

/**
 * The last table that passed, read again for every check: when its text is the same as then, so is
 * every mount point it lists, and parsing it again (~0.1 ms of a warm request) is skipped. Kept
 * only when every expected path was listed as spelled, since a path found through `realpath` also
 * depends on the symlinks on its way, which the table does not show; and only for the very list
 * it passed (the helper's one list of mounts).
 */
let lastPassed: { mountinfo: string; expected: readonly string[]; text: string } | null = null;

/**
 * Largest mount table read: far above what the kernel's default limit of 100 000 mounts per
 * namespace lists with paths of ordinary length. A larger one counts as unreadable.
 */
const MOUNT_TABLE_MAX_BYTES = 64 * 1024 * 1024;
/** The kept read buffer's size; a larger table is read into a buffer of its own. */
const KEPT_BUFFER_BYTES = 64 * 1024;

/**
 * Every mount point of this process's mount namespace, or null where there is no mount table or
 * it cannot be read whole (larger than `maxBytes`).
 */
export function readMountPoints(
  mountinfo: string = OWN_MOUNTINFO,
  maxBytes: number = MOUNT_TABLE_MAX_BYTES,
): Set<string> | null {
  const text = readMountTable(mountinfo, maxBytes);
  return text === null ? null : mountPointsOf(text);
}

function readMountTable(mountinfo: string, maxBytes: number): string | null {
  return mountinfo === OWN_MOUNTINFO ? readOwnMountTable(maxBytes) : readOtherMountTable(mountinfo, maxBytes);
}

function mountPointsOf(text: string): Set<string> {
  const mounted = new Set<string>();
  for (const line of text.split('\n')) {
    // Fields: id, parent id, major:minor, root, mount point, ... (proc(5)).
    const field = line.split(' ')[4];
    if (field !== undefined) mounted.add(unescapeMountField(field));
  }
  return mounted;
}

/**
 * The mount points a tree operation must neither cross nor remove. Where Linux has a mount table
 * this cannot read, the operation is refused: run without it, a recursive remove would empty a
 * directory of another file system before it failed on that mount point. Null only where the
 * platform keeps no mount table here (macOS, Windows).
 */
export function treeMountPoints(
  mountinfo: string = OWN_MOUNTINFO,
  maxBytes: number = MOUNT_TABLE_MAX_BYTES,
): ReadonlySet<string> | null {
  const mounted = readMountPoints(mountinfo, maxBytes);
  if (mounted !== null || process.platform !== 'linux') return mounted;
  throw new FsError(
    'permission_denied',
    `cannot read the mount table ${mountinfo} (missing, unreadable or larger than ${maxBytes} bytes): the tree operation is refused rather than run without knowing its mount points`,
  );
}

let ownMountTable: { fd: number; buffer: Buffer } | null = null;

/**
 * This process's mount table, through one descriptor kept from the first read: a read from offset
 * 0 makes the kernel list the table as it is at that moment (a seq_file), and skips the open's
 * walk through procfs, ~0.1 ms of every warm request. Null when it cannot be read.
 */
function readOwnMountTable(maxBytes: number): string | null {
  try {
    ownMountTable ??= { fd: openSync(OWN_MOUNTINFO, 'r'), buffer: Buffer.allocUnsafe(KEPT_BUFFER_BYTES) };
    return readWholeTable(ownMountTable.fd, ownMountTable.buffer, maxBytes);
  } catch {
    return null;
  }
}

function readOtherMountTable(path: string, maxBytes: number): string | null {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    return readWholeTable(fd, Buffer.allocUnsafe(KEPT_BUFFER_BYTES), maxBytes);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** The table from offset 0 (a procfs file reports no size, so it is read until a read returns 0). */
function readWholeTable(fd: number, first: Buffer, maxBytes: number): string | null {
  let buffer = first;
  let filled = 0;
  for (;;) {
    if (filled === buffer.length) {
      if (filled >= maxBytes) return null;
      const larger = Buffer.allocUnsafe(Math.min(filled * 2, maxBytes + 1));
      buffer.copy(larger);
      buffer = larger;
    }
    const count = readSync(fd, buffer, filled, buffer.length - filled, filled);
    if (count === 0) return filled > maxBytes ? null : buffer.toString('utf8', 0, filled);
    filled += count;
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
