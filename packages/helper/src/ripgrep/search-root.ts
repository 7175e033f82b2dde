import { FsError, fsPathArg, hasLoneSurrogate } from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import { stat } from '../fs-async.js';
import { fromOsError } from '../os-error.js';

/**
 * The path fs/search or fs/glob starts at, checked before ripgrep runs: it exists and can be
 * reached (a missing or unreadable root is the same error a read gets, not an empty result), and
 * its name can be passed to a program (Node's spawn takes arguments as UTF-8 text only).
 */
export async function checkSearchRoot(path: string): Promise<void> {
  try {
    await stat(fsPathArg(path));
  } catch (error) {
    throw fromOsError(error, path);
  }
  if (hasLoneSurrogate(path)) {
    throw new FsError(
      'invalid_params',
      `cannot search ${displayPath(path)}: its name is not valid UTF-8 (search a parent directory instead)`,
    );
  }
}
