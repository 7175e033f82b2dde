import { FsError, type HostOs, type WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { SandboxBackend } from './backend.js';
import { createBwrapBackend } from './linux/bwrap-backend.js';

export interface BackendSelection {
  os: HostOs;
  /** Environment consulted for backend overrides (FS_SANDBOX_BWRAP). */
  env: Record<string, string | undefined>;
  /** The context's Windows level; only the Windows backend reads it. */
  windowsSandboxLevel: WindowsSandboxLevel;
}

/**
 * The platform sandbox for a context that needs one. There is no "no sandbox" backend: an OS
 * without a usable one gets `sandbox_unavailable`, never an unsandboxed run.
 */
export function selectBackend(selection: BackendSelection): SandboxBackend {
  switch (selection.os) {
    case 'linux':
      return createBwrapBackend({ env: selection.env });
    default:
      throw new FsError('sandbox_unavailable', `no sandbox backend is available on ${selection.os} yet`);
  }
}
