/**
 * @fs-sandbox/broker as a library: create a broker, call the Codex filesystem methods with a
 * sandbox context, get results or typed FsErrors. The backends and the runner seam are exported
 * for tools (explain, warm pools) and tests.
 */

// The policy types a caller of `call` writes and catches, so a consumer needs this package only:
// `ParamsIn<'fs/readFile'>` and `ResultOf<'fs/readFile'>` are a method's params and result.
export {
  ERROR_KINDS,
  type ErrorKind,
  FsError,
  isFsError,
  type Method,
  type ParamsIn,
  type ResultOf,
  type SandboxContext,
  type SandboxContextInput,
  type SandboxedContext,
  type WireError,
  type WireResultOf,
} from '@fs-sandbox/policy';
export type { BackendName, HelperRuntime, LaunchSpec, SandboxBackend } from './backends/backend.js';
export { helperScript } from './backends/backend.js';
export { type LaunchCommand, launchCommand } from './backends/launch-command.js';
export { type BwrapSandbox, buildBwrapSandbox, bwrapFactPaths } from './backends/linux/bwrap-args.js';
export { createBwrapBackend } from './backends/linux/bwrap-backend.js';
export { locateBwrap } from './backends/linux/bwrap-locate.js';
export { createLandlockBackend } from './backends/linux/landlock-backend.js';
export {
  LINUX_BACKEND_CHOICES,
  LINUX_BACKEND_ENV,
  type LinuxBackendPreference,
} from './backends/linux/linux-backend-choice.js';
export { collectPathFacts, type PathFact, type PathFacts } from './backends/linux/path-facts.js';
export { selectBackend } from './backends/select-backend.js';
export { type BrokerOptions, type CommandLaunchRequest, createBroker, type FsBroker } from './broker.js';
export { type Broker, type CallInfo, type CallOptions, type FsMethod, isFsMethod } from './broker-api.js';
export type {
  CommandExit,
  CommandOptions,
  CommandRequest,
  CommandRunOptions,
  CommandSpawnOptions,
  RunResult,
  SpawnedCommand,
} from './command-api.js';
export type { NetworkEvent, NetworkEventListener } from './network/network-event.js';
export type { PoolOptions } from './pool/pool-options.js';
export type { PoolStats } from './pool/pool-stats.js';
export { type ResolvedHelperRuntime, resolveHelperRuntime } from './runner/helper-runtime.js';
export { HELPER_RUNTIME_CHOICES, type HelperRuntimeChoice } from './runner/runtime-choice.js';
export { type HelperLauncher, type RunHelperOptions, runHelper } from './runner/spawn-helper.js';
export { spawnLaunch } from './runner/spawn-launch.js';
