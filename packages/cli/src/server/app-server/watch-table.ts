import {
  closeSync,
  constants,
  type FSWatcher,
  fstatSync,
  openSync,
  readlinkSync,
  statfsSync,
  statSync,
  watch,
} from 'node:fs';
import {
  type AppNotification,
  type AppParams,
  type AppResult,
  denialOf,
  FsError,
  type HostOs,
  isFsError,
  isProcfsAlias,
  joinPath,
  LIMITS,
  nativeToPathUri,
  type PathGuard,
  PSEUDO_FILE_SYSTEMS,
  parentPath,
  parseSandboxContext,
  type SandboxContext,
  splitNativePath,
} from '@fs-sandbox/policy';
import type { SessionNotifier } from '../surface.js';
import type { AppServerSettings } from './app-server-settings.js';

/**
 * fs/watch on one connection, bounded by the server's policy. The watcher runs in the broker (one
 * inotify watch per fs/watch, through Node's fs.watch; not recursive, as the reference's is not), so
 * what keeps it inside the policy is where it looks and what it reports:
 *
 * 1. The path must be one the server's context could read (`explainAccess`: the lexical rules and
 *    the physical location, as a file method's pre-checks judge them), and not spelled through a
 *    procfs alias (`/proc/self/cwd/…`), else the watch is refused.
 * 2. The watched directory (the path itself, or the parent of a file or a missing path) is opened,
 *    its physical location read back from the descriptor and judged again, and inotify watches
 *    that very descriptor (`/proc/self/fd/N/.`): a symlink swapped in after the check cannot make it
 *    watch anything else. The location read back must name that same directory (same device and
 *    inode) and lie on a real file system: a directory reached through another process's
 *    `/proc/<pid>/root` reads back as a path that means something else here, and the broker's own
 *    `/proc` is not the one the sandbox shows.
 * 3. Every batch of changes is judged where the directory physically is at that moment, against
 *    the guard the server's sandbox is built with now: a name that is denied (or below a denied
 *    directory, or matching a deny glob) is never reported, and a directory that moved somewhere
 *    unreadable reports nothing.
 *
 * A watched directory that does not exist yet is waited for as the reference does: its nearest
 * existing ancestor is watched, and each missing directory below it is entered (with the checks
 * of step 2) once it appears; the watched path is reported when it comes into being.
 *
 * Changes are coalesced for 200 ms as the reference does, sorted and reported once each; at most
 * LIMITS.watchPendingPaths are held per watch, beyond which they collapse into the watched path
 * itself ("something changed here"), and none are sent while the client is not reading.
 */

/** The reference's coalescing window for fs/changed. */
export const WATCH_DEBOUNCE_MS = 200;

/**
 * A missing directory that appeared but could not be entered for a passing reason (the policy
 * could not be judged at that moment, no inotify watch or descriptor was left) is tried again this
 * often, at most this many times: no second event for its name may ever come.
 */
const ENTER_RETRY_MS = 100;
const ENTER_RETRIES = 50;

/** inotify reports events on the watched directory itself under this name (no entry has it). */
const SELF = '.';

interface Watch {
  readonly id: string;
  /** The path as the client asked (normalised): reported paths are spelled under it. */
  readonly path: string;
  /** Set for a file or missing path: only this name of the watched directory is reported. */
  readonly onlyName: string | null;
  /** The directory whose entries are reported, as spelled (the path itself, or its parent). */
  readonly directory: string;
  /**
   * Directories still missing between the one watched now and `directory`, outermost first; empty
   * once `directory` itself is watched.
   */
  missing: string[];
  /** The directory watched now, as spelled: `directory`, or its nearest existing ancestor. */
  watched: string;
  fd: number;
  watcher: FSWatcher;
  pending: Set<string>;
  overflowed: boolean;
  timer: NodeJS.Timeout | null;
  flushing: boolean;
  /** An entering of the missing directories is under way; `enterAgain` asks for one more pass. */
  entering: boolean;
  enterAgain: boolean;
  /** The next try at a directory that could not be entered for a passing reason, and how many came before. */
  retryTimer: NodeJS.Timeout | null;
  retries: number;
}

/** A directory opened to be watched, its physical location judged. */
interface OpenedDirectory {
  fd: number;
  watcher: FSWatcher;
}

export class WatchTable {
  private readonly watches = new Map<string, Watch>();
  private closed = false;
  private parsedContext: SandboxContext | null = null;

  constructor(
    private readonly settings: AppServerSettings,
    private readonly os: HostOs,
    private readonly notifier: SessionNotifier<AppNotification>,
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
    if (isProcfsAlias(path)) {
      throw new FsError(
        'permission_denied',
        `cannot watch ${path}: it names a file through a procfs alias; use the file's own path`,
      );
    }
    await this.assertReadable(path);
    const directory = isDirectory(path) ? path : parentPath(this.os, path);
    if (directory === null) throw new FsError('invalid_request', `cannot watch ${path}`);
    const onlyName = directory === path ? null : path.slice(directory.length).replace(/^\/+/, '') || null;
    const { existing, missing } = nearestExisting(this.os, directory);
    const opened = await this.openWatched(existing, () => {
      if (this.closed || this.watches.has(watchId)) {
        throw new FsError('invalid_request', `watchId already exists: ${watchId}`);
      }
    });
    const entry: Watch = {
      id: watchId,
      path,
      onlyName,
      directory,
      missing,
      watched: existing,
      ...opened,
      pending: new Set(),
      overflowed: false,
      timer: null,
      flushing: false,
      entering: false,
      enterAgain: false,
      retryTimer: null,
      retries: 0,
    };
    this.listen(entry);
    this.watches.set(watchId, entry);
    // A directory made between the search above and the watch would send no event: look once.
    if (missing.length > 0) void this.enterMissing(entry);
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
    if (entry.retryTimer !== null) clearTimeout(entry.retryTimer);
    entry.watcher.close();
    closeSync(entry.fd);
    entry.pending.clear();
  }

  /**
   * Opens a directory to watch and judges where it physically is; `beforeWatch` may still refuse
   * (the table changed while the policy was judged). The descriptor is closed on any refusal.
   */
  private async openWatched(directory: string, beforeWatch: () => void): Promise<OpenedDirectory> {
    const fd = openDirectory(directory);
    try {
      const physical = physicalOf(fd);
      assertNamesDescriptor(fd, physical, directory);
      await this.assertReadable(physical);
      beforeWatch();
      return { fd, watcher: watch(`/proc/self/fd/${fd}/${SELF}`, { persistent: false }) };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  private listen(entry: Watch): void {
    const { watcher } = entry;
    watcher.on('change', (_event, name) =>
      this.onChange(entry, watcher, typeof name === 'string' ? name : null),
    );
    // A watch whose directory vanished (or whose watcher failed) reports nothing more; it stays
    // listed until unwatched, as the reference's does.
    watcher.on('error', () => watcher.close());
  }

  private onChange(entry: Watch, watcher: FSWatcher, name: string | null): void {
    if (this.watches.get(entry.id) !== entry || entry.watcher !== watcher || name === null) return;
    if (entry.missing.length > 0) {
      // Waiting for a missing directory: only its appearing matters.
      if (name === entry.missing[0]) void this.enterMissing(entry);
      return;
    }
    // The directory itself moved or changed: a file watch reports its file, a directory watch
    // itself; either way the flush judges where it is now.
    const changed = name === SELF ? (entry.onlyName ?? '') : name;
    if (entry.onlyName !== null && changed !== entry.onlyName) return;
    this.record(entry, changed);
  }

  private record(entry: Watch, name: string): void {
    if (!entry.overflowed) {
      if (entry.pending.size >= LIMITS.watchPendingPaths) {
        entry.overflowed = true;
        entry.pending.clear();
      } else entry.pending.add(name);
    }
    this.schedule(entry);
  }

  /**
   * Moves the watch down into each missing directory that now exists, judged as the first one was.
   * A directory that is not there, not a directory, or not one the policy may watch leaves the
   * watch where it is (it is tried again at the next event for that name). Arriving at the watched
   * directory means the watched path came into being since the watch began: it is reported.
   */
  private async enterMissing(entry: Watch): Promise<void> {
    if (entry.entering) {
      entry.enterAgain = true;
      return;
    }
    entry.entering = true;
    try {
      do {
        entry.enterAgain = false;
        while (entry.missing.length > 0) {
          const next = joinPath(this.os, entry.watched, entry.missing[0] as string);
          let opened: OpenedDirectory;
          try {
            opened = await this.openWatched(next, () => {
              if (this.watches.get(entry.id) !== entry) throw new FsError('internal_error', 'unwatched');
            });
          } catch (error) {
            this.retryLater(entry, error);
            break;
          }
          entry.watcher.close();
          closeSync(entry.fd);
          Object.assign(entry, opened, { watched: next, missing: entry.missing.slice(1), retries: 0 });
          this.listen(entry);
          // What was made below it before its watch began sends no event: the loop goes on into
          // the next missing name at once, so a `mkdir -p` faster than the entering is followed.
        }
      } while (entry.enterAgain && entry.missing.length > 0 && this.watches.get(entry.id) === entry);
      if (entry.missing.length === 0 && this.watches.get(entry.id) === entry && exists(entry.path)) {
        this.record(entry, entry.onlyName ?? '');
      }
    } finally {
      entry.entering = false;
    }
  }

  /**
   * A directory not there yet (or not a directory, or one the policy does not let be watched) is
   * waited for: its appearing or replacement is an event of the directory watched now. Any other
   * failure to enter it would leave the watch above it for good, as no event for its name may come
   * again, so it is tried again a little later, a bounded number of times.
   */
  private retryLater(entry: Watch, error: unknown): void {
    const kind = isFsError(error) ? error.kind : null;
    if (kind === 'not_found' || kind === 'not_directory' || kind === 'permission_denied') return;
    if (entry.retryTimer !== null || entry.retries >= ENTER_RETRIES) return;
    entry.retries += 1;
    entry.retryTimer = setTimeout(() => {
      entry.retryTimer = null;
      if (this.watches.get(entry.id) === entry) void this.enterMissing(entry);
    }, ENTER_RETRY_MS);
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
      assertNamesDescriptor(entry.fd, physical, entry.watched);
    } catch {
      // Deleted, or no longer reachable under the name it reads back as.
      return [];
    }
    if (!(await this.readable(physical))) return [];
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

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The nearest existing ancestor of `directory` (or itself) and the names below it that are still
 * missing. Bounded by the path's depth (a path is at most LIMITS.pathMaxBytes long).
 */
function nearestExisting(os: HostOs, directory: string): { existing: string; missing: string[] } {
  const missing: string[] = [];
  let existing = directory;
  while (!exists(existing)) {
    const parent = parentPath(os, existing);
    const name = splitNativePath(os, existing)?.segments.at(-1);
    if (parent === null || name === undefined) break;
    missing.unshift(name);
    existing = parent;
  }
  return { existing, missing };
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

/**
 * Refuses a directory whose location read back from its descriptor is not a path to that very
 * directory here (the same device and inode), or which lies on a pseudo file system: the policy
 * is judged on that location, so it must mean what the sandbox would mean by it.
 */
function assertNamesDescriptor(fd: number, physical: string, spelled: string): void {
  const opened = fstatSync(fd);
  let named: ReturnType<typeof statSync> | undefined;
  try {
    named = statSync(physical);
  } catch {
    named = undefined;
  }
  if (named === undefined || named.dev !== opened.dev || named.ino !== opened.ino) {
    throw new FsError(
      'permission_denied',
      `cannot watch ${spelled}: where it leads (${physical}) is not reachable by that path here`,
    );
  }
  const fileSystem = PSEUDO_FILE_SYSTEMS.get(statfsSync(`/proc/self/fd/${fd}`).type);
  if (fileSystem !== undefined) {
    throw new FsError(
      'permission_denied',
      `cannot watch ${spelled}: it lies on the ${fileSystem} pseudo file system, which the sandbox shows otherwise`,
    );
  }
}
