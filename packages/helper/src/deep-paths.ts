import { constants, existsSync } from 'node:fs';
import { fsPathArg, type HostOs } from '@fs-sandbox/policy/core';
import { type FileHandle, open } from './fs-async.js';
import { fromOsError } from './os-error.js';

// Linux refuses paths of PATH_MAX (4096) bytes or more, and every lookup walks the whole path, so
// deep trees are re-rooted long before that: each syscall then walks at most this many bytes.
const PATH_BUDGET_BYTES = 256;

interface Anchor {
  /** Full path of the anchored directory. */
  path: string;
  /** Short path that names it: /proc/self/fd/N. */
  via: string;
  handle: FileHandle;
}

/**
 * Lets an iterative tree operation (remove, copy) reach files deeper than PATH_MAX. On Linux a
 * path that grows past the budget is re-rooted at an open descriptor of one of its ancestor
 * directories, `/proc/self/fd/N/rest`, which the kernel resolves like openat(N, rest): the same
 * file the full path names (an anchor follows symlinks exactly as the full path's lookup would),
 * but each lookup walks a short path. Callers visit the tree depth-first, so an anchor that is not an ancestor of the path asked for
 * is finished with and is closed. Elsewhere (or without /proc) paths are returned unchanged and an
 * over-long one fails with a typed "File name too long" error.
 */
export class DeepPaths {
  private readonly anchors: Anchor[] = [];
  private readonly enabled: boolean;

  constructor(os: HostOs) {
    this.enabled = os === 'linux' && existsSync('/proc/self/fd');
  }

  /** A path the kernel accepts that names the same file as `path`. */
  async reach(path: string): Promise<string> {
    if (!this.enabled) return path;
    await this.dropAnchorsOutside(path);
    for (;;) {
      const anchor = this.anchors.at(-1);
      const candidate = anchor === undefined ? path : anchor.via + path.slice(anchor.path.length);
      if (Buffer.byteLength(candidate) <= PATH_BUDGET_BYTES) return candidate;
      // Only the last name is left past the anchor: the path is short enough for the kernel.
      if (!(await this.anchorWithin(path, anchor))) return candidate;
    }
  }

  async close(): Promise<void> {
    await this.dropAnchorsOutside(null);
  }

  private async dropAnchorsOutside(path: string | null): Promise<void> {
    for (let top = this.anchors.at(-1); top !== undefined; top = this.anchors.at(-1)) {
      // Only strictly inside: `/proc/self/fd/N` itself is a magic link in /proc, not the directory's
      // own name, so lstat/rmdir of the anchored directory must go through its parent's anchor.
      if (path?.startsWith(`${top.path}/`)) return;
      this.anchors.pop();
      await top.handle.close();
    }
  }

  /**
   * Opens, relative to the current anchor, the deepest ancestor of `path` whose name fits the
   * budget (at least the next one down, so every call makes progress). False when `path` is the
   * only name left below the current anchor.
   */
  private async anchorWithin(path: string, anchor: Anchor | undefined): Promise<boolean> {
    const base = anchor?.path ?? '';
    const via = anchor?.via ?? '';
    const rest = path.slice(base.length);
    let cut = rest.indexOf('/', 1);
    if (cut === -1) return false;
    for (let next = rest.indexOf('/', cut + 1); next !== -1; next = rest.indexOf('/', next + 1)) {
      if (Buffer.byteLength(via + rest.slice(0, next)) > PATH_BUDGET_BYTES) break;
      cut = next;
    }
    const directory = base + rest.slice(0, cut);
    let handle: FileHandle;
    try {
      handle = await open(fsPathArg(via + rest.slice(0, cut)), constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (error) {
      throw fromOsError(error, directory);
    }
    this.anchors.push({ path: directory, via: `/proc/self/fd/${handle.fd}`, handle });
    return true;
  }
}
