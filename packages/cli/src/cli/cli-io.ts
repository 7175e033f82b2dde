import type { BrokerOptions, FsBroker } from '@fs-sandbox/broker/internal';
/** What commands may touch of the outside world; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: Record<string, string | undefined>;
  /** The directory relative native paths are resolved against. */
  cwd: string;
}

export interface CliDeps {
  io: CliIo;
  createBroker(options: BrokerOptions): FsBroker;
  /** Records the process exit code (the last failing command wins). */
  setExitCode(code: number): void;
}

/** Exit codes: 0 success, 1 an operation or check failed, 2 bad usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
