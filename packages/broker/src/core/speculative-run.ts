import type { HelperRequest } from '@fs-sandbox/helper';
import type { PathGuard, SandboxedContext } from '@fs-sandbox/policy';
import type { RunHelperOptions } from '../runner/helper-process.js';
import type { SandboxRun, SandboxRunner } from '../runner/sandbox-runner.js';

/**
 * A request that changes nothing starts its helper on the sandbox its context was last built with,
 * and asks the host reads of that build again (runner/host-reads.ts) while the helper answers: the
 * ~1 ms of asking and pre-checking then overlaps the helper's work instead of preceding it. The
 * order is the point:
 *
 * 1. The request is sent to a helper under that build's launch.
 * 2. The reads are asked. Unless every one gets its old answer, the helper is killed, its reply
 *    (whatever it read under a view the host has changed since) is never looked at, and the
 *    request goes the ordinary way: rebuilt, pre-checked and run again (null).
 * 3. They held: the sandbox is exactly the one `prepare` would build now, and the helper acted no
 *    earlier than it would have after a `prepare`. The physical pre-check runs on its guard; a
 *    refusal waits for the helper's reply (so the pool keeps its spare: the helper refuses too, or
 *    reads what it may) and is the answer instead of it.
 *
 * Only for requests that create, replace and remove nothing (not write class, not a batch): a write
 * under a view that no longer holds could change what the new view protects, and could not be
 * taken back.
 */
export async function runOnLastSandbox(
  runner: SandboxRunner,
  context: SandboxedContext,
  request: HelperRequest,
  precheck: ((guard: PathGuard) => void) | null,
  options: RunHelperOptions,
): Promise<SandboxRun | null> {
  const last = await runner.lastPrepared(context);
  if (last === null) return null;
  // The caller's cancel still reaches the helper; so does this function's own, when the build no
  // longer holds.
  const own = new AbortController();
  const forward = () => own.abort();
  options.signal?.addEventListener('abort', forward, { once: true });
  if (options.signal?.aborted) own.abort();
  let markSent = () => {};
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const running = runner.run(
    request,
    last.sandbox,
    { ...options, signal: own.signal, onSent: markSent },
    context,
  );
  const settled = running.then(
    () => undefined,
    () => undefined,
  );
  try {
    // A launcher that never says it sent (a test double) is asked after it answered: slower, same result.
    await Promise.race([sent, settled]);
    if (!last.holds()) {
      own.abort();
      return null;
    }
    try {
      precheck?.(last.sandbox.guard);
    } catch (error) {
      await settled;
      throw error;
    }
    return await running;
  } finally {
    options.signal?.removeEventListener('abort', forward);
  }
}
