/** The Codex filesystem methods the helper performs (DESIGN §4); fs/open, fs/readBlock and fs/close are broker-side handles. */
export const FS_METHODS = [
  'fs/readFile',
  'fs/writeFile',
  'fs/createDirectory',
  'fs/getMetadata',
  'fs/canonicalize',
  'fs/readDirectory',
  'fs/remove',
  'fs/copy',
  'fs/walk',
] as const;

export type FsMethod = (typeof FS_METHODS)[number];

/**
 * Everything the helper accepts: the fs methods plus the internal operations behind fs/open and
 * fs/readBlock (`fs/openForRead` validates a readable regular file and reports its identity,
 * `fs/readRange` reads one block of it, re-checking that identity), and the clean-up the broker
 * runs after killing a helper mid-write (`fs/removeTemps`).
 */
export const HELPER_OPERATIONS = [...FS_METHODS, 'fs/openForRead', 'fs/readRange', 'fs/removeTemps'] as const;

export type HelperOperation = (typeof HELPER_OPERATIONS)[number];

/** Methods served by the broker's read-handle manager rather than by one helper run each. */
export const HANDLE_METHODS = ['fs/open', 'fs/readBlock', 'fs/close'] as const;

export type HandleMethod = (typeof HANDLE_METHODS)[number];

export function isFsMethod(value: string): value is FsMethod {
  return (FS_METHODS as readonly string[]).includes(value);
}

export function isHelperOperation(value: string): value is HelperOperation {
  return (HELPER_OPERATIONS as readonly string[]).includes(value);
}

export function isHandleMethod(value: string): value is HandleMethod {
  return (HANDLE_METHODS as readonly string[]).includes(value);
}
