import type { BigIntStats } from 'node:fs';
import {
  FsError,
  fsPathArg,
  type HostOs,
  isFsError,
  LIMITS,
  type PathGuard,
  parentPath,
} from '@fs-sandbox/policy/core';
import { locateName } from './directory-anchor.js';
import { displayPath } from './display-path.js';
import { lstat } from './fs-async.js';
import { createDirectoryAt } from './ops/create-directory.js';
import { readWholeFile } from './ops/read-file.js';
import { removeAt } from './ops/remove.js';
import { writeFileAt } from './ops/write-file.js';
import { fromOsError, hasErrno } from './os-error.js';

/**
 * The file primitives a patch is committed with, each one the helper's existing checked operation:
 * every name is located through its opened parent and judged by the guard on its physical location
 * where it is acted on (write-target.ts, remove.ts, create-directory.ts), so a directory swapped
 * for a symlink after an earlier check fails instead of leading the write elsewhere.
 */

export interface PatchFileContext {
  os: HostOs;
  sandboxed: boolean;
  guard: PathGuard | null;
}

// ignoreBOM: a byte order mark stays in the text (as the first line's first character, where the
// reference reads it too) and so is written back.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file's text, or null when nothing is there. Not UTF-8 is refused, as the reference refuses it. */
export async function readTextOrNull(path: string, context: PatchFileContext): Promise<string | null> {
  let bytes: Buffer;
  try {
    bytes = await readWholeFile(path, context.guard, LIMITS.textMaxBytes);
  } catch (error) {
    if (isFsError(error) && error.kind === 'not_found') return null;
    throw error;
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new FsError('invalid_request', `${displayPath(path)} is not UTF-8 text; a patch cannot update it`);
  }
}

/** What is at a name, not following a link there (null: nothing). */
export async function lstatOrNull(path: string, os: HostOs): Promise<BigIntStats | null> {
  let located: Awaited<ReturnType<typeof locateName>>;
  try {
    located = await locateName(path, os);
  } catch (error) {
    if (isFsError(error) && error.kind === 'not_found') return null;
    throw error;
  }
  try {
    return await lstat(fsPathArg(located.access), { bigint: true });
  } catch (error) {
    if (hasErrno(error, 'ENOENT')) return null;
    throw fromOsError(error, path);
  } finally {
    await located.parent.close();
  }
}

/** Writes `text` atomically; the parent directory must exist (see makeParents). */
export async function writeText(path: string, text: string, context: PatchFileContext): Promise<void> {
  await writeFileAt(path, new TextEncoder().encode(text), { ...context, mode: 'overwrite' });
}

/** Makes the missing parent directories of `path` (as the reference does) and returns them, outermost first. */
export async function makeParents(path: string, context: PatchFileContext): Promise<string[]> {
  const missing: string[] = [];
  for (let parent = parentPath(context.os, path); parent !== null; parent = parentPath(context.os, parent)) {
    if ((await lstatOrNull(parent, context.os)) !== null) break;
    missing.unshift(parent);
  }
  const innermost = missing.at(-1);
  if (innermost !== undefined) await createDirectoryAt(innermost, true, context.os, context.guard);
  return missing;
}

/** Removes a file or a link (never what it points to); a directory is refused, as the reference refuses it. */
export async function deleteFile(path: string, context: PatchFileContext): Promise<void> {
  if ((await lstatOrNull(path, context.os))?.isDirectory()) {
    throw new FsError('is_directory', `Failed to delete file ${displayPath(path)}: it is a directory`);
  }
  await removeAt(path, { ...context, recursive: false, force: false });
}
