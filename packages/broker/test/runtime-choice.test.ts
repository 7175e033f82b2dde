import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helperBundlePath } from '@fs-sandbox/helper/bundle-path';
import { describe, expect, it } from 'vitest';
import { spareLaunch } from '../src/pool/spare-launch.js';
import { chooseRuntime, requestedRuntime } from '../src/runner/runtime-choice.js';
import { directLaunch } from './support/launches.js';

const helperEnv = { PATH: '/usr/bin:/bin' };

const builtBunHelper = () => helperBundlePath({}, 'bun');
const missing = () => {
  throw new Error('@fs-sandbox/helper-linux-x64 is not installed');
};

describe('helper runtime choice', () => {
  it('takes the option, else FS_SANDBOX_HELPER_RUNTIME, else auto', () => {
    expect(requestedRuntime('node', { FS_SANDBOX_HELPER_RUNTIME: 'bun' })).toBe('node');
    expect(requestedRuntime(undefined, { FS_SANDBOX_HELPER_RUNTIME: 'bun' })).toBe('bun');
    expect(requestedRuntime(undefined, {})).toBe('auto');
  });

  it('refuses an unknown choice by name, as invalid_params', () => {
    expect(() => requestedRuntime(undefined, { FS_SANDBOX_HELPER_RUNTIME: 'deno' })).toThrow(
      expect.objectContaining({ kind: 'invalid_params', message: expect.stringContaining('`deno`') }),
    );
  });

  it('runs node when node is asked for, saying so', async () => {
    const chosen = await chooseRuntime('node', 'linux', helperEnv, builtBunHelper);
    expect(chosen.executable.kind).toBe('node');
    expect(chosen.reason).toBe('node, as asked');
  });

  it('falls back to node under auto where Bun does not run the helper (macOS, Windows), and says why', async () => {
    for (const os of ['macos', 'windows'] as const) {
      const chosen = await chooseRuntime('auto', os, helperEnv, builtBunHelper);
      expect(chosen.executable.kind).toBe('node');
      expect(chosen.reason).toMatch(/only on Linux/);
    }
  });

  it('falls back to node under auto when the Bun helper is not installed, and says why (a warning for doctor)', async () => {
    const chosen = await chooseRuntime('auto', 'linux', helperEnv, missing, 'x64');
    expect(chosen.executable.kind).toBe('node');
    expect(chosen.reason).toMatch(/the Bun helper is not installed: @fs-sandbox\/helper-linux-x64/);
    expect(chosen.bunUnusable).toMatch(/not installed/);
  });

  it('falls back to node under auto when the Bun helper fails its self-check, as a warning for doctor', async () => {
    const chosen = await chooseRuntime('auto', 'linux', helperEnv, () => '/bin/true', 'x64');
    expect(chosen.executable.kind).toBe('node');
    expect(chosen.bunUnusable).toMatch(/failed its self-check/);
  });

  it('gives no warning where Bun never runs the helper, or node was asked for', async () => {
    expect((await chooseRuntime('auto', 'macos', helperEnv, missing)).bunUnusable).toBeUndefined();
    expect((await chooseRuntime('node', 'linux', helperEnv, missing, 'x64')).bunUnusable).toBeUndefined();
  });

  it('refuses bun asked for explicitly where it cannot run, never switching to node silently', async () => {
    await expect(chooseRuntime('bun', 'macos', helperEnv, builtBunHelper)).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
    });
    await expect(chooseRuntime('bun', 'linux', helperEnv, builtBunHelper, 'ia32')).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
    });
    await expect(chooseRuntime('bun', 'linux', helperEnv, missing, 'x64')).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
      message: expect.stringContaining('not installed'),
    });
  });

  it('refuses a Bun helper that fails its self-check (a file that is no helper)', async () => {
    const notAHelper = () => '/bin/true';
    await expect(chooseRuntime('bun', 'linux', helperEnv, notAHelper, 'x64')).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
      message: expect.stringContaining('failed its self-check'),
    });
  });

  it.skipIf(process.platform !== 'linux')(
    'gives up on a Bun helper that never answers its self-check, even one that ignores SIGTERM and keeps its output open (Linux: Bun runs the helper only there)',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-self-check-'));
      const hang = join(dir, 'hang.sh');
      await writeFile(hang, '#!/bin/sh\ntrap "" TERM\nsleep 60 &\nwait\n', { mode: 0o755 });
      try {
        await expect(chooseRuntime('bun', 'linux', helperEnv, () => hang, 'x64')).rejects.toMatchObject({
          kind: 'sandbox_unavailable',
          message: expect.stringContaining('did not answer within'),
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(process.platform !== 'linux' || process.arch !== 'x64')(
    'takes the built Bun helper under auto on Linux x64 once its self-check passed',
    async () => {
      const chosen = await chooseRuntime('auto', 'linux', helperEnv, builtBunHelper);
      expect(chosen.executable).toEqual({ kind: 'bun', path: builtBunHelper() });
      expect(chosen.reason).toMatch(/passed the self-check/);
    },
  );
});

describe('spare launches', () => {
  it('gives a node spare --no-lazy and a Bun spare no runtime flag', () => {
    const node = directLaunch({ sandboxProgram: 'bwrap', runtime: '/usr/bin/node', helper: 'h.cjs' });
    expect(spareLaunch(node).runtimeArgs).toEqual(['--no-lazy']);
    const bun = { ...node, runtimeKind: 'bun' as const, helper: null };
    expect(spareLaunch(bun).runtimeArgs).toEqual([]);
  });
});
