import type { HelperReply, HelperRequest } from '@fs-sandbox/helper';
import { FsError, type PathGuard, type SandboxedContext } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { runOnLastSandbox } from '../src/core/speculative-run.js';
import type { RunHelperOptions } from '../src/runner/helper-process.js';
import type { PreparedSandbox, SandboxRun, SandboxRunner } from '../src/runner/sandbox-runner.js';

/**
 * The speculative read's order, with a runner double that logs what happens when: the request is
 * sent before the host reads are asked, a reply is used only when they held, and a build that no
 * longer holds kills its helper and is never answered from.
 */

const guard: PathGuard = { entries: [], denyGlobs: [], deniedIdentities: [] } as unknown as PathGuard;
const sandbox = { guard } as unknown as PreparedSandbox;
const context = {} as SandboxedContext;
const request = { operation: 'fs/readFile', params: { path: '/w/a' } } as unknown as HelperRequest;

function reply(text: string): SandboxRun {
  return {
    reply: {
      status: 'ok',
      payload: { operation: 'fs/readFile', response: { text } },
    } as unknown as HelperReply,
    backend: 'bwrap',
  };
}

interface Double {
  runner: SandboxRunner;
  events: string[];
  /** The options each run was given (its signal shows whether it was killed). */
  runs: RunHelperOptions[];
  answer(run: SandboxRun | Error): void;
}

/** A runner whose last build holds as `holds` says; each run says it sent at once (unless `silent`). */
function double(holds: boolean | null, silent = false): Double {
  const events: string[] = [];
  const runs: RunHelperOptions[] = [];
  let answer: (run: SandboxRun | Error) => void = () => {};
  const runner = {
    lastPrepared: async () =>
      holds === null
        ? null
        : {
            sandbox,
            holds: () => {
              events.push('holds asked');
              return holds;
            },
          },
    run: (_request: HelperRequest, _sandbox: PreparedSandbox, options: RunHelperOptions) => {
      runs.push(options);
      // As the real runner: the bytes are written a few awaits after run() is called.
      if (!silent)
        void Promise.resolve()
          .then(() => undefined)
          .then(() => {
            events.push('sent');
            options.onSent?.();
          });
      return new Promise<SandboxRun>((resolve, reject) => {
        answer = (run) => {
          events.push('replied');
          if (run instanceof Error) reject(run);
          else resolve(run);
        };
        options.signal?.addEventListener('abort', () => {
          events.push('killed');
          reject(new FsError('internal_error', 'operation cancelled'));
        });
      });
    },
  } as unknown as SandboxRunner;
  return { runner, events, runs, answer: (run) => answer(run) };
}

/** Lets the speculation reach its next await. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('runOnLastSandbox', () => {
  it('sends the request before asking the host reads, and answers with the reply once they held', async () => {
    const { runner, events, answer } = double(true);
    const running = runOnLastSandbox(runner, context, request, null, {});
    await turn();
    expect(events).toEqual(['sent', 'holds asked']);
    answer(reply('fresh'));
    expect(await running).toEqual(reply('fresh'));
  });

  it('kills the helper and answers nothing from it when the build no longer holds', async () => {
    const { runner, events, runs, answer } = double(false);
    const running = runOnLastSandbox(runner, context, request, null, {});
    await turn();
    answer(reply('what the old view showed'));
    expect(await running).toBeNull();
    expect(runs[0]?.signal?.aborted).toBe(true);
    expect(events.slice(0, 3)).toEqual(['sent', 'holds asked', 'killed']);
  });

  it('sends nothing where no build is kept', async () => {
    const { runner, events } = double(null);
    expect(await runOnLastSandbox(runner, context, request, null, {})).toBeNull();
    expect(events).toEqual([]);
  });

  it("runs the pre-check on the held build's guard: its refusal is the answer, after the helper's reply", async () => {
    const { runner, events, answer } = double(true);
    const seen: PathGuard[] = [];
    const refusal = new FsError('permission_denied', 'cannot read /w/a: denied');
    const running = runOnLastSandbox(
      runner,
      context,
      request,
      (checked) => {
        seen.push(checked);
        throw refusal;
      },
      {},
    );
    await turn();
    expect(events).toEqual(['sent', 'holds asked']);
    answer(reply('read anyway'));
    await expect(running).rejects.toBe(refusal);
    expect(seen).toEqual([guard]);
    // Not killed: the reply came, so a pooled helper's shape is refilled as after any reply.
    expect(events).toEqual(['sent', 'holds asked', 'replied']);
  });

  it('does not pre-check a build that no longer holds (the ordinary way rebuilds and checks)', async () => {
    const { runner } = double(false);
    let checked = 0;
    const running = runOnLastSandbox(
      runner,
      context,
      request,
      () => {
        checked += 1;
      },
      {},
    );
    expect(await running).toBeNull();
    expect(checked).toBe(0);
  });

  it("passes the caller's cancel on to the helper", async () => {
    const { runner, runs } = double(true);
    const caller = new AbortController();
    const running = runOnLastSandbox(runner, context, request, null, { signal: caller.signal });
    await turn();
    caller.abort();
    await expect(running).rejects.toMatchObject({ kind: 'internal_error' });
    expect(runs[0]?.signal?.aborted).toBe(true);
  });

  it('asks the host reads after the reply when the launcher never says it sent', async () => {
    const { runner, events, answer } = double(true, true);
    const running = runOnLastSandbox(runner, context, request, null, {});
    await turn();
    expect(events).toEqual([]);
    answer(reply('late'));
    expect(await running).toEqual(reply('late'));
    expect(events).toEqual(['replied', 'holds asked']);
  });
});
