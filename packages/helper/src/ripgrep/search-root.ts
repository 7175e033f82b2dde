import {
  FsError,
  fsPathArg,
  type HostOs,
  hasLoneSurrogate,
  joinPath,
  parentPath,
} from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import { stat } from '../fs-async.js';
import { fromOsError } from '../os-error.js';

/**
 * Where ripgrep runs for one request. ripgrep anchors `-g` globs (`src/*.ts`, the policy's
 * `/secret`) at its working directory, not at the path it searches, so it runs in the searched
 * directory (a searched file's parent) on `./name`; `nativeOf` turns the `./…` paths it prints
 * back into native paths.
 */
export interface RipgrepPlace {
  cwd: string;
  operand: string;
  nativeOf(printed: string): string;
}

/**
 * The place for the path fs/search or fs/glob starts at, checked before ripgrep runs: it exists
 * and can be reached (a missing or unreadable root is the same error a read gets, not an empty
 * result), and its name can be passed to a program (Node's spawn takes UTF-8 text only).
 */
export async function ripgrepPlace(path: string, os: HostOs): Promise<RipgrepPlace> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(fsPathArg(path))).isDirectory();
  } catch (error) {
    throw fromOsError(error, path);
  }
  if (hasLoneSurrogate(path)) {
    throw new FsError(
      'invalid_params',
      `cannot search ${displayPath(path)}: its name is not valid UTF-8 (search a parent directory instead)`,
    );
  }
  const cwd = isDirectory ? path : (parentPath(os, path) ?? path);
  // A backslash is a name character on POSIX, a separator only on Windows.
  const separators = os === 'windows' ? /[\\/]+/ : /\/+/;
  const name = isDirectory ? '' : (path.slice(cwd.length).split(separators).pop() ?? '');
  return {
    cwd,
    operand: `.${os === 'windows' ? '\\' : '/'}${name}`,
    nativeOf(printed: string): string {
      const [dot, ...rest] = printed.split(separators);
      return joinPath(os, cwd, ...(dot === '.' ? rest : [printed]).filter((part) => part !== ''));
    },
  };
}
