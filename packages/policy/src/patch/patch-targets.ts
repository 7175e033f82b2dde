import type { HostOs } from '../host-os.js';
import { isAbsoluteNative, joinPath, normalizeNativePath } from '../native-path.js';
import { assertPathLength } from '../request-bounds.js';
import type { PatchHunk } from './parse-patch.js';

/** A hunk with its paths resolved: native, absolute, lexically normalised. */
export interface PatchTargetOf {
  hunk: PatchHunk;
  path: string;
  movePath: string | null;
}

/**
 * Where a patch's paths lead: a relative path is under `cwd`, an absolute one stands (the reference
 * accepts both). Resolved lexically, once, so the broker's pre-check, the assessment and the helper
 * all name the same file; the helper then checks each one physically where it acts.
 */
export function resolvePatchTargets(hunks: readonly PatchHunk[], cwd: string, os: HostOs): PatchTargetOf[] {
  const resolve = (path: string) => {
    // The name as written is bounded before it is resolved, and what it resolves to after.
    assertPathLength(Buffer.byteLength(path, 'utf8'), path);
    const resolved = isAbsoluteNative(os, path)
      ? (normalizeNativePath(os, path) ?? path)
      : joinPath(os, cwd, path);
    assertPathLength(Buffer.byteLength(resolved, 'utf8'), resolved);
    return resolved;
  };
  return hunks.map((hunk) => ({
    hunk,
    path: resolve(hunk.path),
    movePath: hunk.kind === 'update' && hunk.movePath !== null ? resolve(hunk.movePath) : null,
  }));
}
