import {
  assertWritable,
  childPath,
  FsError,
  fsPathArg,
  isFsError,
  isTaggedTempName,
  LIMITS,
  TEMP_TAG,
  taggedTempName,
} from '@fs-sandbox/policy/core';
import { type DirectoryAnchor, openDirectory } from '../directory-anchor.js';
import { unlink } from '../fs-async.js';
import type { Operation, OperationContext } from '../operation.js';
import { fromOsError, hasErrno } from '../os-error.js';
import { pathParam, requiredBoolean } from '../params.js';
import { TEMP_NAME_ATTEMPTS } from '../temp-name.js';
import { walkTree } from '../tree-walk.js';

/**
 * After the broker killed a helper mid-write: removes the temporary files carrying that request's
 * tag in the directory `path` (a write's or a file copy's destination directory) or in the tree
 * below it (a tree copy's destination). Nothing else is touched; a missing directory is success.
 */
export const removeTempsOperation: Operation<'fs/removeTemps'> = {
  parse(raw, os) {
    const tag = raw.tag;
    if (typeof tag !== 'string' || !TEMP_TAG.test(tag)) {
      throw new FsError('invalid_params', 'invalid value for `tag`: expected 24 hexadecimal digits');
    }
    return { path: pathParam(raw, 'path', os), tag, recursive: requiredBoolean(raw, 'recursive') };
  },
  async run({ path, tag, recursive }, context) {
    const root = await openDirectory(path, context.os, { noFollow: true, display: path }).catch(
      (error: unknown) => {
        if (isFsError(error) && (error.kind === 'not_found' || error.kind === 'not_directory')) return null;
        throw error;
      },
    );
    if (root === null) return { response: {} };
    const tooMany = () =>
      new FsError(
        'invalid_request',
        `cannot clean ${path}: it holds more than ${LIMITS.treeMaxEntries} entries`,
      );
    try {
      await walkTree(
        root,
        path,
        root.physical,
        {
          async enter(_parent, _entry, directory) {
            return recursive ? directory.physical : null;
          },
          async visit(parent, entry, directory) {
            if (!entry.stats.isFile() || !isTaggedTempName(entry.name, tag)) return;
            const physical = childPath(context.os, parent, entry.name);
            if (context.guard !== null) assertWritable(context.guard, physical, entry.display, context.os);
            await unlink(fsPathArg(directory.child(entry.name))).catch((error: unknown) => {
              if (!hasErrno(error, 'ENOENT')) throw fromOsError(error, entry.display);
            });
          },
          async leave() {},
        },
        // Only a tree's unreadable directories are passed over: the one directory of a write is
        // either listed or cleaned by name.
        {
          os: context.os,
          maxEntries: LIMITS.treeMaxEntries,
          tooMany,
          onLoop: 'skip',
          skipUnreadable: recursive,
        },
      );
    } catch (error) {
      // Under Landlock a directory beside a denied one may be written but not listed (the listing
      // would reach the denied one too): the names the request could have made there are removed.
      if (recursive || !isFsError(error) || error.kind !== 'permission_denied') throw error;
      await removeTempsByName(root, tag, context);
    } finally {
      await root.close();
    }
    return { response: {} };
  },
};

/**
 * Every staging name one request can have made in one directory: a helper serves one request, and
 * its counter goes up by one per attempt (TEMP_NAME_ATTEMPTS) per file, for at most a batch's
 * operations or a patch's files (4 096 unlinks at most, only after a kill).
 */
const TEMP_NAMES_PER_REQUEST = Math.max(LIMITS.batchMaxOperations, LIMITS.patchMaxFiles) * TEMP_NAME_ATTEMPTS;

async function removeTempsByName(
  directory: DirectoryAnchor,
  tag: string,
  context: OperationContext,
): Promise<void> {
  for (let attempt = 1; attempt <= TEMP_NAMES_PER_REQUEST; attempt += 1) {
    const name = taggedTempName(tag, attempt);
    const physical = childPath(context.os, directory.physical, name);
    if (context.guard !== null) assertWritable(context.guard, physical, physical, context.os);
    await unlink(fsPathArg(directory.child(name))).catch((error: unknown) => {
      if (!hasErrno(error, 'ENOENT')) throw fromOsError(error, physical);
    });
  }
}
