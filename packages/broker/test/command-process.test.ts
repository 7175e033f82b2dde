import { describe, expect, it } from 'vitest';
import type { CommandLaunchSpec } from '../src/backends/backend.js';
import { CommandProcess } from '../src/runner/command-process.js';

/** A command run as it is, without a sandbox (the case where something it starts can outlive it). */
function bare(script: string): CommandLaunchSpec {
  return {
    backend: null,
    sandboxProgram: null,
    sandboxArgs: [],
    argv: ['sh', '-c', script],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: '/',
  };
}

function run(script: string, drainTimeoutMs?: number) {
  return new Promise<{ code: number; drainTimedOut: boolean; output: string; ms: number }>(
    (resolve, reject) => {
      const started = Date.now();
      let output = '';
      CommandProcess.start(
        bare(script),
        'ignore',
        {
          output: (_stream, chunk) => {
            output += chunk.toString();
          },
          exit: (code, drainTimedOut) => resolve({ code, drainTimedOut, output, ms: Date.now() - started }),
          closed: () => undefined,
        },
        drainTimeoutMs === undefined ? {} : { drainTimeoutMs },
      ).catch(reject);
    },
  );
}

describe.skipIf(process.platform === 'win32')('CommandProcess output drain', () => {
  it('reports the exit once the pipes ended, with all output', async () => {
    await expect(run('echo a; echo b >&2; exit 3', 5_000)).resolves.toMatchObject({
      code: 3,
      drainTimedOut: false,
      output: expect.stringContaining('a'),
    });
  });

  it('reports the exit at the deadline when a process it left holds the pipes', async () => {
    const result = await run('sleep 30 & echo $!', 300);
    // The sleep it left is this test's to end.
    process.kill(Number(result.output.trim()));
    expect(result).toMatchObject({ code: 0, drainTimedOut: true, output: expect.stringMatching(/^\d+\n$/) });
    expect(result.ms).toBeLessThan(20_000);
  });
});
