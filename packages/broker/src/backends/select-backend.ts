import type { HostOs, WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { SandboxBackend } from './backend.js';
import { createBwrapBackend } from './linux/bwrap-backend.js';
import { createSeatbeltBackend } from './macos/seatbelt-backend.js';
import { createWindowsBackend } from './windows/restricted-token-backend.js';

export interface BackendSelection {
  os: HostOs;
  /** Environment consulted for backend overrides (FS_SANDBOX_BWRAP). */
  env: Record<string, string | undefined>;
  /** The context's Windows level; only the Windows backend reads it. */
  windowsSandboxLevel: WindowsSandboxLevel;
}

/**
 * The platform sandbox for a context that needs one. There is no "no sandbox" backend: a level
 * or machine without a usable one gets `sandbox_unavailable`, never an unsandboxed run.
 */
export function selectBackend(selection: BackendSelection): SandboxBackend {
  switch (selection.os) {
    case 'linux':
      return createBwrapBackend({ env: selection.env });
    case 'macos':
      return createSeatbeltBackend();
    case 'windows':
      // `disabled` (and any level without a sandbox) yields a backend that refuses every plan.
      return createWindowsBackend(selection.windowsSandboxLevel);
  }
}
