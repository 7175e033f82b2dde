import { type ChildProcess, spawn } from 'node:child_process';
import { encodeRequest, type HelperReply, type HelperRequest } from '@fs-sandbox/helper';
import { FsError, LIMITS } from '@fs-sandbox/policy/core';
import type { LaunchSpec } from '../backends/backend.js';
import { launchFailure } from './launch-failure.js';
import { ReplyReader } from './reply-reader.js';

export interface RunHelperOptions {
  /** Aborting kills the helper's process tree; the call rejects with `internal_error`. */
  signal?: AbortSignal;
  /** Run time before the whole process tree is killed (`timeout`); defaults to LIMITS.helperTimeoutMs. */
  timeoutMs?: number;
  /** Largest accepted stdout; defaults to LIMITS.helperMaxReplyBytes. */
  maxReplyBytes?: number;
}

/**
 * The seam every helper run goes through: a launch, one request, one reply. A warm pool replaces
 * this function with one that hands the request to a pre-spawned helper of the same launch.
 */
export type HelperLauncher = (
  launch: LaunchSpec,
  request: HelperRequest,
  options: RunHelperOptions,
) => Promise<HelperReply>;

/** The only place the broker spawns a helper process. */
export const runHelper: HelperLauncher = (launch, request, options) => {
  if (options.signal?.aborted) return Promise.reject(cancelled());
  return new Promise<HelperReply>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? LIMITS.helperTimeoutMs;
    const reader = new ReplyReader(options.maxReplyBytes ?? LIMITS.helperMaxReplyBytes);
    const stderr = new StderrExcerpt(LIMITS.helperMaxStderrBytes);
    // Detached: the helper (and anything it starts) gets its own process group, so a timeout can kill
    // the whole tree with one signal. Under bwrap, --die-with-parent and the pid namespace also
    // take the sandboxed processes down with the launcher.
    const child = spawn(launch.file, launch.args, {
      env: launch.env,
      cwd: '/',
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    let settled = false;
    // Set when the broker decides the run failed (timeout, cancel, bad reply); the process tree is
    // killed and the call rejects with this once the process is gone.
    let failure: FsError | null = null;
    const finish = (outcome: () => HelperReply) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      try {
        resolve(outcome());
      } catch (error) {
        reject(error);
      }
    };
    const stop = (error: FsError) => {
      if (failure !== null) return;
      failure = error;
      killProcessTree(child);
    };
    const timer = setTimeout(
      () =>
        stop(
          new FsError('timeout', `helper did not finish within ${timeoutMs} ms; its process tree was killed`),
        ),
      timeoutMs,
    );
    const onAbort = () => stop(cancelled());
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout?.on('data', (chunk: Buffer) => {
      if (failure !== null) return;
      try {
        reader.push(chunk);
      } catch (error) {
        stop(error as FsError);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    // EPIPE when the helper exits before reading all of stdin: its exit status says what happened.
    child.stdin?.on('error', () => {});
    child.on('error', (error) => {
      // Only a failed spawn has no pid; other errors (a failed kill) are followed by 'close'.
      if (child.pid === undefined) {
        finish(() => {
          throw new FsError('sandbox_unavailable', `cannot start ${launch.file}: ${error.message}`);
        });
      }
    });
    child.on('close', (code, signal) =>
      finish(() => {
        if (failure !== null) throw failure;
        if (code !== 0) throw launchFailure(launch, code, signal, stderr.text());
        return reader.finish();
      }),
    );

    if (child.stdin) {
      // One JSON line; a write's bytes follow it raw (binary framing), never base64 again.
      for (const part of encodeRequest(request)) child.stdin.write(part);
      child.stdin.end();
    }
  });
};

function killProcessTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    // The negative pid names the process group created by `detached`.
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

function cancelled(): FsError {
  return new FsError('internal_error', 'operation cancelled; the helper process tree was killed');
}

/** The first bytes of stderr (where the cause is), for error messages; the rest is drained and dropped. */
class StderrExcerpt {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    const room = this.maxBytes - this.size;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    this.chunks.push(new Uint8Array(kept.buffer, kept.byteOffset, kept.byteLength));
    this.size += kept.byteLength;
  }

  text(): string {
    return Buffer.concat(this.chunks, this.size).toString('utf8');
  }
}
