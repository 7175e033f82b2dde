import { type HostOs, separatorFor } from '@fs-sandbox/policy/core';

/**
 * The path of entry `name` (as readdir returned it: never empty, `.`, `..`, nor holding a
 * separator) inside `directory` (normalised). Plain concatenation instead of joinPath: tree walks
 * call this once per entry, and re-normalising a path thousands of levels deep every time would
 * make a deep walk quadratic.
 */
export function childPath(os: HostOs, directory: string, name: string): string {
  const separator = separatorFor(os);
  return directory.endsWith(separator) ? `${directory}${name}` : `${directory}${separator}${name}`;
}
