import type { HostOs } from '../host-os.js';
import { windowsComparableName } from '../native-path.js';

/**
 * Metadata directories that steer tools the user runs later (git hooks and config, agent and Codex
 * instructions). Writing them is code execution by proxy, so they stay read-only under every
 * writable root unless the policy grants a writable root inside one explicitly.
 */
export const PROTECTED_METADATA_NAMES = ['.git', '.agents', '.codex'] as const;
export type ProtectedMetadataName = (typeof PROTECTED_METADATA_NAMES)[number];

/**
 * The protected name `segment` stands for, or null. Matching ignores case on macOS and Windows,
 * whose default file systems are case-insensitive: there `.GIT` is the same directory as `.git`
 * (and on Windows so is `.git.`, see windowsComparableName).
 */
export function protectedNameOf(os: HostOs, segment: string): ProtectedMetadataName | null {
  const name =
    os === 'linux' ? segment : os === 'windows' ? windowsComparableName(segment) : segment.toLowerCase();
  return (PROTECTED_METADATA_NAMES as readonly string[]).includes(name)
    ? (name as ProtectedMetadataName)
    : null;
}

/** True when a writable root lies inside a protected name: the explicit grant that lifts protection. */
export function isInsideProtectedName(os: HostOs, segments: readonly string[]): boolean {
  return segments.some((segment) => protectedNameOf(os, segment) !== null);
}
