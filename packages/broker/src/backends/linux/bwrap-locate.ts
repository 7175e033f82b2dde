import {
  decodePathBytes,
  FsError,
  isAbsoluteNative,
  joinPath,
  pathStartsWith,
} from '@fs-sandbox/policy/core';
import * as host from '../../runner/host-reads.js';

/**
 * Finds the bubblewrap binary. Only a sanitised PATH is searched (never the broker's own PATH, which
 * an agent may have prepended a directory to), and the binary must not lie inside a writable root:
 * a helper could otherwise replace the program that builds the next helper's sandbox.
 */

/** Searched in order; FS_SANDBOX_BWRAP (absolute) overrides it. */
const BWRAP_SEARCH_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'] as const;

const BWRAP_OVERRIDE_VARIABLE = 'FS_SANDBOX_BWRAP';

export async function locateBwrap(
  env: Record<string, string | undefined>,
  writableRoots: readonly string[] = [],
): Promise<string> {
  const override = host.variable(env, BWRAP_OVERRIDE_VARIABLE);
  const candidates =
    override !== undefined && override !== ''
      ? [validOverride(override)]
      : BWRAP_SEARCH_DIRS.map((dir) => joinPath('linux', dir, 'bwrap'));
  for (const candidate of candidates) {
    const real = executableRealPath(candidate);
    if (real === null) continue;
    const root = writableRoots.find((writable) => pathStartsWith('linux', real, writable));
    if (root !== undefined) {
      throw new FsError(
        'sandbox_unavailable',
        `bubblewrap at ${real} lies inside the writable root ${root}; refusing to use a binary the sandbox could replace`,
      );
    }
    return real;
  }
  const where = override ? `${BWRAP_OVERRIDE_VARIABLE}=${override}` : BWRAP_SEARCH_DIRS.join(':');
  throw new FsError(
    'sandbox_unavailable',
    `bubblewrap (bwrap) was not found or is not executable (${where}); install bubblewrap to run sandboxed file operations`,
  );
}

function validOverride(value: string): string {
  if (!isAbsoluteNative('linux', value) || value.includes('\n')) {
    throw new FsError(
      'sandbox_unavailable',
      `${BWRAP_OVERRIDE_VARIABLE} must be an absolute path, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Synchronous: it runs for every sandboxed request, and three thread-pool round trips cost ~0.4 ms. */
function executableRealPath(path: string): string | null {
  try {
    const real = decodePathBytes(host.realpath(path));
    if (!host.stat(real).isFile()) return null;
    host.assertExecutable(real);
    return real;
  } catch {
    return null;
  }
}
