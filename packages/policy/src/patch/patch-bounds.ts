import { FsError } from '../error-kinds.js';
import { LIMITS } from '../limits.js';
import { type PatchHunk, parsePatch } from './parse-patch.js';

/**
 * A patch parsed within its own bounds: its bytes are counted before it is parsed, its files and
 * chunks after. The broker checks this with the params (checkBounds); the helper, which trusts no
 * caller's parse, checks it again on the text it receives.
 */
export function parseBoundedPatch(patch: string): PatchHunk[] {
  const bytes = Buffer.byteLength(patch, 'utf8');
  if (bytes > LIMITS.patchMaxBytes) {
    throw new FsError(
      'file_too_large',
      `the patch is ${bytes} bytes; fs/applyPatch takes at most ${LIMITS.patchMaxBytes} bytes of patch text`,
    );
  }
  const hunks = parsePatch(patch);
  if (hunks.length > LIMITS.patchMaxFiles) {
    throw new FsError(
      'invalid_params',
      `the patch names ${hunks.length} files; fs/applyPatch takes at most ${LIMITS.patchMaxFiles} per patch`,
    );
  }
  const chunks = hunks.reduce((sum, hunk) => sum + (hunk.kind === 'update' ? hunk.chunks.length : 0), 0);
  if (chunks > LIMITS.patchMaxChunks) {
    throw new FsError(
      'invalid_params',
      `the patch has ${chunks} update chunks; fs/applyPatch takes at most ${LIMITS.patchMaxChunks} per patch`,
    );
  }
  return hunks;
}
