import { FsError, LIMITS } from '@fs-sandbox/policy/core';
import { RecordSplitter } from './rg-stream.js';

export interface RipgrepRun {
  /** ripgrep's exit code (0 found, 1 nothing found, 2 errors), null when it was stopped. */
  exitCode: number | null;
  /** Why the helper stopped it early: a bound was reached (the result is then `truncated`). */
  stopped: boolean;
  /** ripgrep's own error text (fatal errors only: `--no-messages`), trimmed and bounded. */
  stderr: string;
}

/**
 * Runs ripgrep with `argv` in `cwd` (no shell, empty environment: no RIPGREP_CONFIG_PATH, nothing
 * of the host's) and hands each output record to `onRecord` as it arrives; `onRecord` returns false when
 * the caller has what a bound allows. ripgrep is killed when that happens, when a record passes
 * LIMITS.searchMaxOutputLineBytes, or after LIMITS.searchMaxRunMs.
 */
export async function runRipgrep(
  program: string,
  argv: string[],
  cwd: string,
  separator: number,
  onRecord: (record: Buffer) => boolean,
): Promise<RipgrepRun> {
  // Only fs/search and fs/glob load child_process: the other operations' start-up does not pay for it.
  const { spawn } = await import('node:child_process');
  const child = spawn(program, argv, {
    cwd,
    env: {},
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const splitter = new RecordSplitter(LIMITS.searchMaxOutputLineBytes, separator);
  let stopped = false;
  let failure: unknown = null;
  let stderr = '';
  const stop = () => {
    stopped = true;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(stop, LIMITS.searchMaxRunMs);
  child.stdout.on('data', (chunk: Buffer) => {
    if (stopped) return;
    try {
      const records = splitter.push(chunk);
      if (records === null) return stop();
      for (const record of records) if (!onRecord(record)) return stop();
    } catch (error) {
      failure = error;
      stop();
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < LIMITS.helperMaxStderrBytes) stderr += chunk.toString('utf8');
  });
  try {
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(code));
    });
    if (failure !== null) throw failure;
    return {
      exitCode: stopped ? null : exitCode,
      stopped,
      stderr: stderr.slice(0, LIMITS.helperMaxStderrBytes).trim(),
    };
  } catch (error) {
    if (error instanceof FsError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new FsError('sandbox_unavailable', `ripgrep cannot be started (${why})`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The error of a run that ended with exit code 2 and a message: a pattern or glob ripgrep refused
 * is the caller's mistake (`invalid_params`, ripgrep's own words); anything else is reported as an
 * internal error. Exit code 2 without a message only means some files were unreadable (masked).
 */
export function ripgrepFailure(run: RipgrepRun): FsError | null {
  if (run.exitCode !== 2 || run.stderr === '') return null;
  // One line: ripgrep draws a caret under the pattern over several, which a JSON error message or a
  // terminal line would only show as escapes.
  const message = run.stderr
    .replace(/^rg: /, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
  if (/regex|glob/i.test(message)) {
    return new FsError('invalid_params', message);
  }
  return new FsError('internal_error', `ripgrep failed: ${message}`);
}

/** The ripgrep path the request brought, or the typed refusal when the broker has none to give. */
export function requireRipgrep(ripgrep: string | null, method: string): string {
  if (ripgrep === null) {
    throw new FsError(
      'sandbox_unavailable',
      `${method} needs ripgrep, and this installation has none (the @vscode/ripgrep binary for this platform is missing)`,
    );
  }
  return ripgrep;
}
