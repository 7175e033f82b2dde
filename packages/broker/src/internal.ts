/**
 * The broker's parts that the workspace's CLI package (`@fs-sandbox/cli`: the `fs-sandbox`
 * program, its JSON-RPC server and its MCP server) builds on beyond the public API. The CLI bundles
 * them from source, so this entry exists only under the `source` condition and is never published:
 * nothing here is an interface another project may depend on.
 */

export type { CommandLaunchSpec } from './backends/backend.js';
export { probeBwrap } from './backends/linux/bwrap-probe.js';
export {
  type KernelPath,
  MASKED_KERNEL_PATHS,
  READ_ONLY_KERNEL_PATHS,
} from './backends/linux/kernel-paths.js';
export { LANDLOCK_DIFFERENCES } from './backends/linux/landlock-backend.js';
export {
  chooseLinuxBackend,
  probeLandlock,
  requestedLinuxBackend,
} from './backends/linux/linux-backend-choice.js';
export { resolveMacosTopLevelAlias } from './backends/macos/macos-path-aliases.js';
export { createSeatbeltBackend } from './backends/macos/seatbelt-backend.js';
export { SANDBOX_EXEC_PATH } from './backends/macos/seatbelt-launch.js';
export { createWindowsBackend } from './backends/windows/restricted-token-backend.js';
export type { CommandLaunchRequest } from './broker.js';
export { FS_METHODS } from './broker-api.js';
export { routeFor } from './core/routing.js';
export * from './index.js';
export { explainNetwork, type NetworkExplanation } from './network/explain-network.js';
export { PROXY_PORTS } from './network/sandbox-listeners.js';
export { POOL_DEFAULTS, POOL_MAXIMUMS } from './pool/pool-options.js';
export { LineSplitter } from './remote/line-splitter.js';
export { CommandProcess, type CommandStartOptions, type CommandStream } from './runner/command-process.js';
export { OutputCap } from './runner/output-cap.js';
export {
  DEFAULT_MAX_PROCESSES,
  describeProcessBound,
  processBoundMechanism,
} from './runner/process-bound.js';
export { HELPER_RUNTIME_ENV } from './runner/runtime-choice.js';
export { type PreparedLaunch, SandboxRunner } from './runner/sandbox-runner.js';
