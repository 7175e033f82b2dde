import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import {
  FsError,
  type HostOs,
  resolveSandboxContext,
  type SandboxContext,
  type SandboxedContext,
  type UnsandboxedReason,
} from '@fs-sandbox/policy';
import type { CallInfo } from '../broker-api.js';

/** Where one operation runs. */
export type Route =
  | { kind: 'in-process'; reason: 'absent' | 'disabled' | 'external' | 'unrestricted' | 'full_disk_write' }
  | { kind: 'sandbox'; context: SandboxedContext };

/**
 * Routing rule: a request without a context (absent or null) takes the broker's own policy when it
 * has one (`serverPolicy`, e.g. `serve`'s profile flags); then only a context that grants
 * everything anyway (absent, unrestricted, disabled, external, full-disk write) runs in-process;
 * every other context goes to the sandbox runner. There is deliberately no fallback from the second branch to the first: if the sandbox
 * cannot be built, the call fails with a typed error, because running a restricted context
 * in-process would trust the helper's own path checks, which symlinks and races defeat.
 * Resolving the context also raises the exact cwd errors (non-native URI, dynamic permissions
 * without cwd) before anything runs.
 */
export function routeFor(
  sandbox: SandboxContext | null | undefined,
  os: HostOs,
  serverPolicy: SandboxContext | null = null,
): Route {
  const resolved = resolveSandboxContext(sandbox ?? serverPolicy, os);
  if (!resolved.sandboxed) return { kind: 'in-process', reason: resolved.reason };
  return { kind: 'sandbox', context: resolved };
}

const UNSANDBOXED_BECAUSE: Record<UnsandboxedReason, string> = {
  absent: 'has no sandbox context (`sandbox` is missing or null)',
  disabled: 'turns the sandbox off (`permissions.type` is `disabled`)',
  external: 'leaves isolation to the caller (`permissions.type` is `external`)',
  unrestricted: 'does not restrict the file system (`file_system.type` is `unrestricted`)',
  full_disk_write: 'grants write access to the whole disk (`root` write with nothing narrowing it)',
};

/** Why a route runs in-process, as the end of a sentence starting "the request …". */
export function unsandboxedBecause(reason: UnsandboxedReason): string {
  return UNSANDBOXED_BECAUSE[reason];
}

/**
 * For a broker that must never act outside a platform sandbox (`requireSandbox`): a route that
 * would run in-process is refused, before any helper or in-process operation runs, saying why it
 * would not be sandboxed and what context would be.
 */
export function assertSandboxed(route: Route): void {
  if (route.kind === 'sandbox') return;
  throw new FsError(
    'permission_denied',
    `refused: this broker requires a sandbox, and the request ${UNSANDBOXED_BECAUSE[route.reason]}; ` +
      'send a `sandbox` whose `permissions` are `managed` with a `restricted` `file_system` that does not grant `root` write',
  );
}

/** A handler answers null when nothing was left to run (every operation of a batch was refused early). */
export interface RouteHandlers {
  inProcess(request: HelperRequest): Promise<HelperReply | null>;
  sandboxed(
    request: HelperRequest,
    context: SandboxedContext,
  ): Promise<{ reply: HelperReply | null; backend: string }>;
}

/** Runs a request on its route; the returned info says which one ran (for the audit log). */
export async function runRouted(
  request: HelperRequest,
  route: Route,
  handlers: RouteHandlers,
): Promise<{ reply: HelperReply | null; info: CallInfo }> {
  if (route.kind === 'in-process') {
    return { reply: await handlers.inProcess(request), info: { sandboxed: false, backend: null } };
  }
  const { reply, backend } = await handlers.sandboxed(request, route.context);
  return { reply, info: { sandboxed: true, backend } };
}
