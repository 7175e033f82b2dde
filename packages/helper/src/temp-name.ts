import { type HostOs, joinPath } from '@fs-sandbox/policy/core';

let counter = 0;

/**
 * A fresh hidden name next to `directory` for a file that is being prepared. The name need not be
 * unpredictable: it is always created with O_EXCL (never opened if it exists), so a planted file or
 * symlink only makes the caller retry with the next name.
 */
export function tempSiblingName(os: HostOs, directory: string): string {
  counter += 1;
  const unique = `${process.pid.toString(36)}-${counter.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  return joinPath(os, directory, `.fs-sandbox-${unique}.tmp`);
}

/** How many fresh names to try before giving up (each collision means someone planted that name). */
export const TEMP_NAME_ATTEMPTS = 16;
