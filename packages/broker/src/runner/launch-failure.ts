import { FsError } from '@fs-sandbox/policy/core';
import type { LaunchSpec } from '../backends/backend.js';

/** Messages the sandbox launchers themselves print when they cannot build the sandbox (not the helper's). */
const LAUNCHER_PREFIXES: Record<LaunchSpec['backend'], RegExp | null> = {
  bwrap: /^bwrap: /,
  // The Landlock launcher (the Bun helper's --landlock mode) prefixes its own failures.
  landlock: /^fs-sandbox landlock: /,
  seatbelt: /^sandbox-exec: /,
  // The Windows launcher runs in-process and reports its own failures as FsErrors.
  'restricted-token': null,
};

/**
 * The one mapping of a non-zero exit to an error. When the launcher reports that the sandbox could
 * not be set up (no user namespaces, a runtime file missing) the kind is `sandbox_unavailable`, so a
 * client can tell "the platform cannot sandbox" from "the helper crashed" (`helper_failed`).
 */
export function launchFailure(
  launch: LaunchSpec,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
): FsError {
  const excerpt = stderr.trim();
  if (LAUNCHER_PREFIXES[launch.backend]?.test(excerpt)) {
    return new FsError(
      'sandbox_unavailable',
      `the ${launch.backend} sandbox could not be set up: ${excerpt}`,
    );
  }
  const status = signal !== null ? `was killed by ${signal}` : `exited with status ${code}`;
  return new FsError('helper_failed', `helper ${status}${excerpt === '' ? '' : `: ${excerpt}`}`);
}
