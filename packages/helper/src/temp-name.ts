import { taggedTempName } from '@fs-sandbox/policy/core';

let counter = 0;
let requestTag: string | null = null;

/**
 * The helper program serves one request: temporary names then carry that request's tag, so the
 * broker can remove them if it has to kill the helper mid-write (policy temp-tag.ts). The library
 * serves many requests at once and is never killed, so it keeps untagged names.
 */
export function tagTemporaryNames(tag: string): void {
  requestTag = tag;
}

/**
 * A fresh hidden name for a file that is being prepared beside its target. The name need not be
 * unpredictable: it is always created with O_EXCL (never opened if it exists), so a planted file or
 * symlink only makes the caller retry with the next name.
 */
export function tempSiblingName(): string {
  counter += 1;
  if (requestTag !== null) return taggedTempName(requestTag, counter);
  const unique = `${process.pid.toString(36)}-${counter.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  return `.fs-sandbox-${unique}.tmp`;
}

/** How many fresh names to try before giving up (each collision means someone planted that name). */
export const TEMP_NAME_ATTEMPTS = 16;
