import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { FsError, type HostOs, isAbsoluteNative, nativeToPathUri, pathStartsWith } from '@fs-sandbox/policy';

/**
 * The directories the tools may reach, as the reference lists them: each one absolute, and also its
 * real path when a symlink leads to it (`/tmp` and `/private/tmp` on macOS). The sandbox is built
 * from them, so the kernel enforces them; the tools' own scope check only keeps the platform's
 * start-up reads (`/usr`, `/etc`…, which the helper needs) out of the tools' direct reach.
 */
export class AllowedDirectories {
  private constructor(
    readonly directories: readonly string[],
    readonly os: HostOs,
    /**
     * The `--read-only-dir` directories (both spellings, as resolved at start): read roots of the
     * sandbox wherever they meet the directories in force, whichever way those were given.
     */
    readonly readOnly: readonly string[] = [],
  ) {}

  /**
   * Keeps the directories that exist; `warn` hears about the others, as the reference does. The
   * read-only directories are allowed directories too, after the others (the reference's order).
   */
  static resolve(
    requested: readonly string[],
    base: string,
    os: HostOs,
    warn: (line: string) => void,
    readOnly: readonly string[] = [],
  ): AllowedDirectories {
    const directories: string[] = [];
    for (const raw of requested) {
      const absolute = resolve(base, expandHome(raw));
      for (const candidate of withRealPath(absolute)) {
        if (!isDirectory(candidate)) {
          warn(`Warning: ${candidate} is not an accessible directory, skipping`);
          continue;
        }
        if (!directories.includes(candidate)) directories.push(candidate);
      }
    }
    return new AllowedDirectories(directories, os, readOnly);
  }

  /**
   * The `--read-only-dir` operands, each absolute and, when a link leads to it, also its real path.
   * Each must be an existing directory when the server starts (the reference refuses to start
   * otherwise): a marking that names nothing could not be placed in the sandbox.
   */
  static resolveReadOnly(requested: readonly string[], base: string): string[] {
    const resolved: string[] = [];
    for (const raw of requested) {
      const spellings = withRealPath(resolve(base, expandHome(raw)));
      if (!spellings.every(isDirectory))
        throw new FsError(
          'invalid_params',
          `--read-only-dir ${raw} is not an existing directory; a read-only directory must exist when the server starts`,
        );
      for (const spelling of spellings) if (!resolved.includes(spelling)) resolved.push(spelling);
    }
    return resolved;
  }

  /** These directories plus the read-only ones, which are always allowed (and always read-only). */
  withReadOnly(): AllowedDirectories {
    const directories = [...this.directories];
    for (const directory of this.readOnly) if (!directories.includes(directory)) directories.push(directory);
    return new AllowedDirectories(directories, this.os, this.readOnly);
  }

  /**
   * The client's roots kept inside `bounds` (`--confine-roots`, the reference's overlap): a root
   * inside one of them stays, one that holds some of them is narrowed to those, one that meets
   * none is dropped and named to `ignored`. The sandbox is built from the result, so a root can
   * narrow the operator's directories, never widen them.
   */
  confinedTo(bounds: AllowedDirectories, ignored: (root: string) => void): AllowedDirectories {
    const within = (path: string, directories: readonly string[]) =>
      directories.some((directory) => pathStartsWith(this.os, path, directory));
    const confined: string[] = [];
    const keep = (directory: string) => {
      if (!confined.includes(directory)) confined.push(directory);
    };
    for (const root of this.directories) {
      const contained = bounds.directories.filter((directory) => within(directory, [root]));
      if (within(root, bounds.directories)) keep(root);
      for (const directory of contained) keep(directory);
      if (!within(root, bounds.directories) && contained.length === 0) ignored(root);
    }
    return new AllowedDirectories(confined, this.os, this.readOnly);
  }

  get isEmpty(): boolean {
    return this.directories.length === 0;
  }

  /**
   * The absolute native path a tool argument names: `~` expanded, a relative path under the first
   * allowed directory. Refused here when it is lexically outside every allowed directory (the
   * separator-aware comparison: `/tmp/allowed_evil` is not under `/tmp/allowed`).
   */
  nativePath(requested: string): string {
    const expanded = expandHome(requested);
    const first = this.directories[0];
    if (first === undefined)
      throw new FsError(
        'permission_denied',
        'Access denied - no allowed directories (none given and no roots from the client)',
      );
    const absolute = isAbsoluteNative(this.os, expanded) ? resolve(expanded) : resolve(first, expanded);
    if (!this.directories.some((directory) => pathStartsWith(this.os, absolute, directory))) {
      throw new FsError(
        'permission_denied',
        `Access denied - path outside allowed directories: ${absolute} not in ${this.directories.join(', ')}`,
      );
    }
    return absolute;
  }

  uri(requested: string): string {
    return nativeToPathUri(this.nativePath(requested), this.os);
  }
}

export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return `${homedir()}${path.slice(1)}`;
  return path;
}

function withRealPath(absolute: string): string[] {
  try {
    const real = realpathSync(absolute);
    return real === absolute ? [absolute] : [absolute, real];
  } catch {
    return [absolute];
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
