import { PassThrough, type Stream, Writable } from 'node:stream';
import {
  type ExecServerNotification,
  FsError,
  METHOD_TABLE,
  notificationSchemasOf,
  parseParams,
  type WireResultOf,
} from '@fs-sandbox/policy';
import {
  type CommandExit,
  type CommandRunOptions,
  type CommandSpawnOptions,
  commandStartParams,
  type RunResult,
  runOutputCap,
  type SpawnedCommand,
} from '../command-api.js';
import { deferredExit, OutputCap } from '../runner/output-cap.js';
import { runCommand } from '../runner/spawned-command.js';
import type { RpcClient } from './rpc-client.js';

/**
 * The command API (`run`, `spawn`) of a remote broker, on the exec-server's process methods: a
 * process/start, its output and end as the `process/output`, `process/exited` and `process/closed`
 * notifications (parsed by the schemas the method table declares for them), its stdin as
 * process/write, `kill` as process/terminate.
 *
 * Output is lossless and bounded: notifications are what the server sends for every chunk (the
 * retained output of process/read keeps only the last MiB). A stream the caller does not read
 * buffers up to OUTPUT_BUFFER_BYTES; past that the connection stops being read, so the server's
 * unsent output grows until it pauses its commands — the same back-pressure a slow client gives a
 * server. Until the stream is read again, replies on this connection wait too.
 */

/** What one command's stream may buffer before the connection stops being read. */
const OUTPUT_BUFFER_BYTES = 1024 * 1024;
/** process/write chunks: small enough that the server's stdin buffer bound is met by waiting. */
const STDIN_CHUNK_BYTES = 64 * 1024;
/** How long a stdin write is retried while the server's stdin buffer is full. */
const STDIN_FULL_DEADLINE_MS = 30_000;

const NOTIFICATIONS = notificationSchemasOf({ 'process/start': METHOD_TABLE['process/start'] });

type ProcessNotification = keyof ExecServerNotification;

/** One started command's side of the notifications. */
interface RemoteProcess {
  notified<N extends ProcessNotification>(method: N, params: ExecServerNotification[N]): void;
  lost(error: FsError): void;
}

export interface RemoteCommands {
  run(argv: readonly string[], options?: CommandRunOptions): Promise<RunResult<string & Buffer>>;
  spawn(argv: readonly string[], options?: CommandSpawnOptions): Promise<SpawnedCommand>;
}

export function remoteCommands(client: RpcClient): RemoteCommands {
  const live = new Map<string, RemoteProcess>();
  let nextId = 1;
  let held = 0;
  const hold = () => {
    if (held++ === 0) client.pauseReading();
  };
  const release = () => {
    if (--held === 0) client.resumeReading();
  };

  client.onNotification((method, params) => {
    const schema = NOTIFICATIONS.get(method);
    if (schema === undefined) return;
    const parsed = schema().safeParse(params);
    // A notification the schema refuses cannot be trusted to name its process: it is dropped, and
    // the command it was meant for ends when its `process/closed` arrives or the connection goes.
    if (!parsed.success) return;
    const notification = parsed.data as ExecServerNotification[ProcessNotification];
    live.get(notification.processId)?.notified(method as ProcessNotification, notification);
  });
  client.onLost((error) => {
    for (const process of [...live.values()]) process.lost(error);
  });

  async function spawn(argv: readonly string[], options: CommandSpawnOptions = {}): Promise<SpawnedCommand> {
    const { stdin = 'pipe', signal, onNetwork, ...wire } = options;
    if (onNetwork !== undefined) {
      throw new FsError(
        'invalid_params',
        '`onNetwork` is the local broker’s: the server logs a remote command’s network',
        {
          field: 'onNetwork',
        },
      );
    }
    if (signal?.aborted) throw cancelled();
    const processId = `library-${nextId++}`;
    const params = commandStartParams(argv, wire, {
      processId,
      pipeStdin: stdin !== 'ignore',
      defaultCwd: null,
    });
    parseParams('process/start', params);

    const streams = {
      stdout: new PassThrough({ highWaterMark: OUTPUT_BUFFER_BYTES }),
      stderr: new PassThrough({ highWaterMark: OUTPUT_BUFFER_BYTES }),
    };
    // The cap is kept here too: a server without the extension (the Codex exec-server) sends all.
    const cap = new OutputCap(params.outputBytesCap ?? null);
    let capReported = false;
    let exitCode: number | null = null;
    let timedOut = false;
    let sandboxed = false;
    let ended = false;
    const { exited, settle, fail } = deferredExit<CommandExit>();
    const finish = (error: FsError | null) => {
      if (ended) return;
      ended = true;
      live.delete(processId);
      signal?.removeEventListener('abort', onAbort);
      streams.stdout.end();
      streams.stderr.end();
      if (error !== null) fail(error);
      // A command killed by a signal is reported by the server as 128 + the signal.
      else settle({ exitCode: exitCode ?? 1, timedOut, capReached: capReported || cap.reached, sandboxed });
    };
    const kill = () => {
      if (!ended) client.request('process/terminate', { processId }).catch(() => {});
    };
    const onAbort = () => {
      kill();
      finish(cancelled());
    };

    // Registered before the start is sent: the server may notify output before it replies.
    live.set(processId, {
      notified(method, params) {
        if (method === 'process/output') {
          const output = params as ExecServerNotification['process/output'];
          if (output.capReached === true) capReported = true;
          const chunk = cap.take(Buffer.from(output.chunk, 'base64'));
          const stream = output.stream === 'stderr' ? streams.stderr : streams.stdout;
          if (chunk.length > 0 && !stream.write(chunk)) {
            hold();
            stream.once('drain', release);
          }
        } else if (method === 'process/exited') {
          const exit = params as ExecServerNotification['process/exited'];
          exitCode = exit.exitCode;
          timedOut = exit.timedOut === true;
        } else if (method === 'process/closed') {
          finish(null);
        }
      },
      lost: (error) => finish(error),
    });
    let started: WireResultOf<'process/start'>;
    try {
      started = (await client.request('process/start', params)) as WireResultOf<'process/start'>;
    } catch (error) {
      live.delete(processId);
      throw error;
    }
    sandboxed = started.sandboxType !== 'none';
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();

    const input = stdin === 'ignore' ? null : remoteStdin(client, processId, () => ended);
    if (input !== null && stdin !== 'pipe') (stdin as Stream).pipe(input);
    return { ...streams, stdin: stdin === 'pipe' ? input : null, exited, kill };
  }

  return {
    spawn,
    async run(argv, options = {}) {
      const { stdin, encoding = 'utf8', ...rest } = options;
      runOutputCap(rest.outputBytesCap);
      const spawned = await spawn(argv, {
        ...rest,
        outputBytesCap: rest.outputBytesCap ?? runOutputCap(null),
        stdin: stdin === undefined ? 'ignore' : 'pipe',
      });
      const { exit, stdout, stderr } = await runCommand(spawned, stdin);
      const text = (bytes: Buffer) => (encoding === 'buffer' ? bytes : bytes.toString('utf8'));
      return { ...exit, stdout: text(stdout), stderr: text(stderr) } as RunResult<string & Buffer>;
    },
  };
}

/**
 * The command's stdin as process/write requests, one at a time and in order. Ending it sends
 * `closeStdin` (an extension of this project's server: the Codex exec-server ignores it, and its
 * commands never read EOF).
 */
function remoteStdin(client: RpcClient, processId: string, ended: () => boolean): Writable {
  let writeId = 0;
  const send = async (chunk: Buffer, closeStdin: boolean) => {
    const deadline = Date.now() + STDIN_FULL_DEADLINE_MS;
    for (;;) {
      try {
        const params = { processId, chunk: chunk.toString('base64'), writeId: String(writeId++) };
        const reply = (await client.request(
          'process/write',
          closeStdin ? { ...params, closeStdin } : params,
        )) as {
          status: string;
        };
        if (reply.status === 'accepted') return;
        throw new FsError('io_error', `the command's stdin is closed (${reply.status})`, { code: 'EPIPE' });
      } catch (error) {
        // The server refuses a write while its stdin buffer is full: wait for the command to read.
        const full = error instanceof FsError && error.kind === 'invalid_request' && !ended();
        if (!full || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  return new Writable({
    async write(chunk: Buffer, _encoding, callback) {
      try {
        for (let at = 0; at < chunk.length; at += STDIN_CHUNK_BYTES)
          await send(chunk.subarray(at, at + STDIN_CHUNK_BYTES), false);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    async final(callback) {
      try {
        if (!ended()) await send(Buffer.alloc(0), true);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}

function cancelled(): FsError {
  return new FsError('internal_error', 'command cancelled; its process tree was killed');
}
