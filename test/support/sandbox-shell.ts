import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServeProcess } from '../fixtures/conformance/serve-process.js';
import { type CliUser, callMethod, runCli } from './cli.js';

/**
 * A shell script run inside the sandbox by each way a sandboxed program starts: `fs-sandbox run`,
 * `process/start` on a served broker, and a helper (a stand-in that runs the script under the exact
 * helper launch, see shell-probe-helper.cjs). The security suites try each attack through all three.
 */

export type Channel = 'run' | 'process/start' | 'helper';
export const CHANNELS: readonly Channel[] = ['run', 'process/start', 'helper'];

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const PROBE = fileURLToPath(new URL('./shell-probe-helper.cjs', import.meta.url));

/** One user's way into the sandbox; `stop()` ends its served broker (one per user, reused). */
export class SandboxShell {
  private serve: ServeProcess | null = null;
  private processes = 0;

  constructor(
    readonly user: CliUser,
    private readonly env: Record<string, string>,
  ) {}

  /**
   * Runs `script` with /bin/sh under `context` (a wire sandbox context), in `cwd`. For the helper,
   * the script is written to `scriptDir` (a directory the context shows) first.
   */
  async run(
    channel: Channel,
    script: string,
    options: { context: unknown; cwd: string; scriptDir: string; cliFlags?: string[] },
  ): Promise<ShellResult> {
    const { context, cwd } = options;
    if (channel === 'run') {
      const done = await runCli(
        [
          'run',
          ...(options.cliFlags ?? []),
          '--sandbox',
          JSON.stringify(context),
          '--',
          '/bin/sh',
          '-c',
          script,
        ],
        { user: this.user, env: this.env, cwd, timeoutMs: 60_000 },
      );
      return { code: done.code, stdout: done.stdout, stderr: done.stderr };
    }
    if (channel === 'helper') {
      const file = join(options.scriptDir, `.probe-${process.pid}-${this.processes++}.sh`);
      await writeFile(file, script, { mode: 0o644 });
      const called = await callMethod(
        'fs/getMetadata',
        { path: `file://${file}`, sandbox: context },
        {
          user: this.user,
          env: { ...this.env, FS_SANDBOX_HELPER_BUNDLE: PROBE, FS_SANDBOX_HELPER_RUNTIME: 'node' },
          cwd,
          timeoutMs: 60_000,
        },
      );
      if (called.result === undefined)
        throw new Error(`the probe helper failed: ${JSON.stringify(called.error)}`);
      return called.result as unknown as ShellResult;
    }
    const serve = await this.served(cwd);
    const processId = `shell-${this.processes++}`;
    const from = serve.rawLines.length;
    const reply = await serve.request('process/start', {
      processId,
      argv: ['/bin/sh', '-c', script],
      cwd: `file://${cwd}`,
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      sandbox: context,
    });
    if (reply.error !== undefined) throw new Error(`process/start failed: ${JSON.stringify(reply.error)}`);
    return finished(serve, processId, from);
  }

  async stop(): Promise<void> {
    await this.serve?.stop();
    this.serve = null;
  }

  private async served(cwd: string): Promise<ServeProcess> {
    if (this.serve === null) {
      this.serve = ServeProcess.start([], { user: this.user, env: this.env, cwd });
      await this.serve.handshake();
    }
    return this.serve;
  }
}

/** The output and exit code of one process/start, from its notifications up to `process/closed`. */
async function finished(serve: ServeProcess, processId: string, from: number): Promise<ShellResult> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const mine = serve.rawLines
      .slice(from)
      .map((line) => JSON.parse(line) as { method?: string; params?: Record<string, unknown> })
      .filter((message) => message.params?.processId === processId);
    if (mine.some((message) => message.method === 'process/closed')) {
      const text = (stream: string) =>
        mine
          .filter((message) => message.method === 'process/output' && message.params?.stream === stream)
          .map((message) => Buffer.from(message.params?.chunk as string, 'base64').toString())
          .join('');
      const exited = mine.find((message) => message.method === 'process/exited');
      return { code: exited?.params?.exitCode as number, stdout: text('stdout'), stderr: text('stderr') };
    }
    if (Date.now() > deadline) throw new Error(`process ${processId} did not close: ${serve.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
