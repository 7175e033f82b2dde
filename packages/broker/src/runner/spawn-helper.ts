import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import type { LaunchSpec } from '../backends/backend.js';
import { cancelled, HelperProcess, type RunHelperOptions } from './helper-process.js';

export type { RunHelperOptions } from './helper-process.js';

/**
 * The seam every helper run goes through: a launch, one request, one reply. The warm pool
 * (pool/warm-pool.ts) is another implementation that hands the request to a helper it spawned
 * earlier under the same launch.
 */
export type HelperLauncher = (
  launch: LaunchSpec,
  request: HelperRequest,
  options: RunHelperOptions,
) => Promise<HelperReply>;

/** A cold run: spawn the helper now and give it the request at once. */
export const runHelper: HelperLauncher = (launch, request, options) => {
  // Already cancelled: nothing is spawned at all.
  if (options.signal?.aborted) return Promise.reject(cancelled());
  return HelperProcess.start(launch).run(request, options);
};
