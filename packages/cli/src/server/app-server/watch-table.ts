import { closeSync, constants, type FSWatcher, openSync, readlinkSync, statSync, watch } from 'node:fs';
import {
  type AppParams,
  type AppResult,
  denialOf,
  FsError,
  type HostOs,
  joinPath,
  LIMITS,
  nativeToPathUri,
  type PathGuard,
  parentPath,
  parseSandboxContext,
  type SandboxContext,
} from '@fs-sandbox/policy';
import type { SessionNotifier } from '../surface.js';
import type { AppServerSettings } from './app-server-settings.js';

/**
 * fs/watch on one connection, bounded by the server's policy. The watcher runs in the broker (one
 * inotify watch per fs/watch, through Node's fs.watch; not recursive, as the reference's is not), so
 * what keeps it inside the policy is where it looks and what it reports:
 *
 * 1. The path must be one the server's context could read (`explainAccess`: the lexical rules and
 *    the physical location, as a file method's pre-checks judge them), else the watch is refused.
 * 2. The watched directory (the path itself, or the parent of a file or a missing path) is opened,
 *    its physical location read back from the descriptor and judged again, and inotify watches
 *    that very descriptor (`/proc/self/fd/N/.`): a symlink swapped in after the check cannot make it
 *    watch anything else.
 * 3. Every batch of changes is judged where the directory physically is at that moment, against
 *    the guard the server's sandbox is built with now: a name that is denied (or below a denied
 *    directory, or matching a deny glob) is never reported, and a directory that moved somewhere
 *    unreadable reports nothing.
 *
 * Changes are coalesced for 200 ms as the reference does, sorted and reported once each; at most
 * LIMITS.watchPendingPaths are held per watch, beyond which they collapse into the watched path
 * itself ("something changed here"), and none are sent while the client is not reading.
 */

/** The reference's coalescing window for fs/changed. */
export const WATCH_DEBOUNCE_MS = 200;

/** inotify reports events on the watched directory itself under this name (no entry has it). */
const SELF = '.';

interface Watch {
  readonly id: string;
  /** The path as the client asked (normalised): reported paths are spelled under it. */
  readonly path: string;
  /** Set for a file or missing path: only this name of the watched directory is reported. */
  readonly onlyName: string | null;
  readonly fd: number;
  readonly watcher: FSWatcher;
  pending: Set<string>;
  overflowed: boolean;
  timer: NodeJS.Timeout | null;
  flushing: boolean;
}

export class WatchTable {
  private readonly watches = new Map<string, Watch>();
  private closed = false;
  private parsedContext: SandboxContext | null = null;

  constructor(
    private readonly settings: AppServerSettings,
    private readonly os: HostOs,
    private readonly notifier: SessionNotifier,
  ) {}

  async watch(params: AppParams<'fs/watch'>): Promise<AppResult<'fs/watch'>> {
    const { watchId, path } = params;
    if (this.os !== 'linux') {
      throw new FsError('sandbox_unavailable', 'fs/watch is served on Linux only so far');
    }
    if (this.watches.has(watchId)) throw new FsError('invalid_request', `watchId already exists: ${watchId}`);
    if (this.watches.size >= LIMITS.watchesPerConnection) {
      throw new FsError(
        'invalid_request',
        `too many watches on this connection (at most ${LIMITS.watchesPerConnection}); unwatch one first`,
      );
    }
    await this.assertReadable(path);
    const directory = isDirectory(path) ? path : parentPath(this.os, path);
    if (directory === null) throw new FsError('invalid_request', `cannot watch ${path}`);
    const onlyName = directory === path ? null : path.slice(directory.length).replace(/^\/+/, '') || null;
    const fd = openDirectory(directory);
    let watcher: FSWatcher;
    try {
      await this.assertReadable(physicalOf(fd));
      if (this.closed || this.watches.has(watchId)) {
        throw new FsError('invalid_request', `watchId already exists: ${watchId}`);
      }
      watcher = watch(`/proc/self/fd/${fd}/${SELF}`, { persistent: false });
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    const entry: Watch = {
      id: watchId,
      path,
      onlyName,
      fd,
      watcher,
      pending: new Set(),
      overflowed: false,
      timer: null,
      flushing: false,
    };
    watcher.on('change', (_event, name) => this.onChange(entry, typeof name === 'string' ? name : null));
    // A watch whose directory vanished (or whose watcher failed) reports nothing more; it stays
    // listed until unwatched, as the reference's does.
    watcher.on('error', () => watcher.close());
    this.watches.set(watchId, entry);
    return { path };
  }

  /** Stops a watch; nothing is sent for it after this returns. An unknown id is not an error. */
  unwatch(watchId: string): AppResult<'fs/unwatch'> {
    const entry = this.watches.get(watchId);
    if (entry !== undefined) this.drop(entry);
    return {};
  }

  /** The client read some notifications: batches held for it go out. */
  resumeOutput(): void {
    for (const entry of this.watches.values()) if (entry.pending.size > 0) this.schedule(entry);
  }

  closeAll(): void {
    this.closed = true;
    for (const entry of [...this.watches.values()]) this.drop(entry);
  }

  private drop(entry: Watch): void {
    this.watches.delete(entry.id);
    if (entry.timer !== null) clearTimeout(entry.timer);
    entry.watcher.close();
    closeSync(entry.fd);
    entry.pending.clear();
  }

  private onChange(entry: Watch, name: string | null): void {
    if (this.watches.get(entry.id) !== entry || name === null) return;
    // The directory itself moved or changed: a file watch reports its file, a directory watch
    // itself; either way the flush judges where it is now.
    const changed = name === SELF ? (entry.onlyName ?? '') : name;
    if (entry.onlyName !== null && changed !== entry.onlyName) return;
    if (!entry.overflowed) {
      if (entry.pending.size >= LIMITS.watchPendingPaths) {
        entry.overflowed = true;
        entry.pending.clear();
      } else entry.pending.add(changed);
    }
    this.schedule(entry);
  }

  private schedule(entry: Watch): void {
    if (entry.timer !== null || entry.flushing) return;
    entry.timer = setTimeout(() => {
      entry.timer = null;
      void this.flush(entry);
    }, WATCH_DEBOUNCE_MS);
  }

  private async flush(entry: Watch): Promise<void> {
    if (this.watches.get(entry.id) !== entry) return;
    if (!this.notifier.hasRoom()) return; // resumeOutput schedules it again
    const names = entry.overflowed ? [''] : [...entry.pending];
    entry.pending = new Set();
    entry.overflowed = false;
    entry.flushing = true;
    try {
      const reported = await this.reportable(entry, names);
      if (this.watches.get(entry.id) === entry && reported.length > 0) {
        this.notifier.notify('fs/changed', { watchId: entry.id, changedPaths: reported });
      }
    } catch {
      // The policy could not be judged now (the sandbox cannot be prepared): nothing is reported.
    } finally {
      entry.flushing = false;
      if (entry.pending.size > 0 || entry.overflowed) this.schedule(entry);
    }
  }

  /** The changed paths that may be named: judged where the watched directory physically is now. */
  private async reportable(entry: Watch, names: string[]): Promise<string[]> {
    let physical: string;
    try {
      physical = physicalOf(entry.fd);
    } catch {
      return [];
    }
    if (physical.endsWith(' (deleted)') || !(await this.readable(physical))) return [];
    const guard = await this.guard();
    const paths = new Set<string>();
    for (const name of names) {
      // '' is the watched directory itself (it moved, or too much changed to list).
      const child = entry.onlyName ?? name;
      const where = child === '' ? physical : joinPath(this.os, physical, child);
      const spelled =
        child === '' || entry.onlyName !== null ? entry.path : joinPath(this.os, entry.path, child);
      if (denialOf(guard, where, this.os) !== null || denialOf(guard, spelled, this.os) !== null) continue;
      paths.add(spelled);
    }
    return [...paths].sort();
  }

  private async guard(): Promise<PathGuard> {
    this.parsedContext ??= parseSandboxContext(this.settings.context);
    return (await this.settings.broker.prepareSandbox(this.parsedContext)).guard;
  }

  private async readable(path: string): Promise<boolean> {
    const { access } = await this.settings.broker.explainAccess({
      path: nativeToPathUri(path, this.os),
      sandbox: this.settings.context,
    });
    return access !== 'none';
  }

  private async assertReadable(path: string): Promise<void> {
    const explained = await this.settings.broker.explainAccess({
      path: nativeToPathUri(path, this.os),
      sandbox: this.settings.context,
    });
    if (explained.access === 'none') {
      throw new FsError('permission_denied', `cannot watch ${path}: ${explained.reason}`);
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function openDirectory(path: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FsError('not_found', `cannot watch below ${path}: it does not exist`);
    if (code === 'ENOTDIR') throw new FsError('not_directory', `cannot watch below ${path}: not a directory`);
    throw new FsError('io_error', `cannot watch below ${path}: ${(error as Error).message}`);
  }
}

/** Where the kernel says a descriptor's directory is now. */
function physicalOf(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}
