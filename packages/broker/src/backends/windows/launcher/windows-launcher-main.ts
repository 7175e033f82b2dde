import { FsError, isFsError, toWireError } from '@fs-sandbox/policy/core';
import {
  parseHelperCommand,
  parseWindowsLaunchPlan,
  type WindowsLaunchPlan,
} from '../windows-launch-protocol.js';
import { applyAclEdits, revokeAclEdits } from './acl-edits.js';
import { withAclLock } from './acl-lock.js';
import { runRestrictedProcess } from './restricted-process.js';
import { createCapabilitySid, createRestrictedToken } from './restricted-token.js';
import { loadWin32Api, type Win32Api } from './win32-api.js';

/**
 * The Windows launcher: `node windows-launcher.js <plan JSON> <helper command line>`, spawned by
 * the runner in place of the helper. It runs as the broker's user, outside the sandbox: it grants a fresh capability SID
 * the plan's ACEs, starts the helper with a write-restricted token holding that SID, waits, and
 * takes the ACEs away again. The helper talks to the runner over the inherited stdio pipes.
 *
 * When the sandbox cannot be built the helper never starts, and the launcher answers in its place
 * with a helper-protocol error reply (`sandbox_unavailable`), so the caller gets a typed error.
 */
async function main(): Promise<void> {
  let helperStarted = false;
  try {
    const plan = parseWindowsLaunchPlan(process.argv[2]);
    const command = parseHelperCommand(process.argv.slice(3));
    const api = await loadWin32Api();
    process.exitCode = runSandboxed(api, plan, command, () => {
      helperStarted = true;
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (helperStarted) {
      // The helper owns stdout now; a second reply would corrupt its answer.
      warn(message);
      process.exitCode = 1;
      return;
    }
    const failure = isFsError(error)
      ? error
      : new FsError('sandbox_unavailable', `the restricted-token sandbox could not be set up: ${message}`);
    process.stdout.write(`${JSON.stringify({ status: 'error', payload: toWireError(failure) })}\n`);
    process.exitCode = 0;
  }
}

function runSandboxed(
  api: Win32Api,
  plan: WindowsLaunchPlan,
  command: string[],
  onStarted: () => void,
): number {
  const capability = createCapabilitySid(api);
  const touched: string[] = [];
  try {
    withAclLock(api, () => applyAclEdits(api, capability, plan.grants, plan.denies, touched));
    const token = createRestrictedToken(api, plan, capability);
    try {
      return runRestrictedProcess(api, token, plan, command, onStarted);
    } finally {
      api.CloseHandle(token);
    }
  } finally {
    // A leftover ACE names a SID no process will ever hold again: reported, never fatal, and it
    // must not turn the helper's finished answer into a failure.
    try {
      const failures = withAclLock(api, () => revokeAclEdits(api, capability, touched));
      for (const failure of failures) warn(`could not remove ACE: ${failure}`);
    } catch (error) {
      warn(`could not remove ACEs: ${(error as Error).message}`);
    }
    api.LocalFree(capability);
  }
}

function warn(message: string): void {
  process.stderr.write(`fs-sandbox windows launcher: ${message}\n`);
}

void main();
