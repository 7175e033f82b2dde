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
  ) {}

  /** Keeps the directories that exist; `warn` hears about the others, as the reference does. */
  static resolve(
    requested: readonly string[],
    base: string,
    os: HostOs,
    warn: (line: string) => void,
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
    return new AllowedDirectories(directories, os);
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
