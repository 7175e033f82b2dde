import { FsError, type HostOs, type SandboxedContext, type WindowsSandboxLevel } from '@fs-sandbox/policy';
import type { SandboxBackend } from './backend.js';
import { createBwrapBackend } from './linux/bwrap-backend.js';
import { createLandlockBackend } from './linux/landlock-backend.js';
import {
  chooseLinuxBackend,
  type LinuxBackendPreference,
  requestedLinuxBackend,
} from './linux/linux-backend-choice.js';
import { createSeatbeltBackend } from './macos/seatbelt-backend.js';
import { createWindowsBackend } from './windows/restricted-token-backend.js';

export interface BackendSelection {
  os: HostOs;
  /** Environment consulted for backend overrides (FS_SANDBOX_BWRAP, FS_SANDBOX_BACKEND). */
  env: Record<string, string | undefined>;
  /** The context's Windows level; only the Windows backend reads it. */
  windowsSandboxLevel: WindowsSandboxLevel;
  /** Linux: `auto` (bwrap where it can make its namespaces, else Landlock), `bwrap` or `landlock`. */
  linuxBackend?: LinuxBackendPreference;
  /** The context's `requireBackend`: any other backend is refused. */
  requireBackend?: SandboxedContext['requireBackend'];
  /** Linux `auto`: probe bwrap first (default), or take it unprobed (chooseLinuxBackend). */
  probe?: 'now' | 'deferred';
}

/**
 * The platform sandbox for a context that needs one. There is no "no sandbox" backend: a level
 * or machine without a usable one gets `sandbox_unavailable`, never an unsandboxed run.
 */
export async function selectBackend(selection: BackendSelection): Promise<SandboxBackend> {
  const backend = await platformBackend(selection);
  const required = selection.requireBackend ?? null;
  if (required !== null && backend.name !== required) {
    throw new FsError(
      'sandbox_unavailable',
      `the context requires the ${required} backend, and this machine runs ${backend.name}; refused rather than run under another sandbox`,
      { kind: 'sandboxUnavailable' },
    );
  }
  return backend;
}

async function platformBackend(selection: BackendSelection): Promise<SandboxBackend> {
  switch (selection.os) {
    case 'linux': {
      const preference = requestedLinuxBackend(selection.linuxBackend, selection.env);
      const choice = await chooseLinuxBackend(preference, selection.env, selection.probe);
      return choice.backend === 'bwrap'
        ? createBwrapBackend({ env: selection.env, reason: choice.reason })
        : createLandlockBackend(choice.reason);
    }
    case 'macos':
      return createSeatbeltBackend();
    case 'windows':
      // `disabled` (and any level without a sandbox) yields a backend that refuses every plan.
      return createWindowsBackend(selection.windowsSandboxLevel);
  }
}
