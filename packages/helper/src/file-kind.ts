import type { BigIntStats, Dirent, Stats } from 'node:fs';

type TypedEntry = Pick<
  Stats | BigIntStats | Dirent,
  'isDirectory' | 'isFile' | 'isSymbolicLink' | 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'
>;

/** What a non-regular file is, in words for error messages ("it is a named pipe (FIFO)"). */
export function describeFileType(entry: TypedEntry): string {
  if (entry.isDirectory()) return 'a directory';
  if (entry.isFile()) return 'a regular file';
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isFIFO()) return 'a named pipe (FIFO)';
  if (entry.isSocket()) return 'a socket';
  if (entry.isCharacterDevice()) return 'a character device';
  if (entry.isBlockDevice()) return 'a block device';
  return 'a special file';
}
