import { describe, expect, it } from 'vitest';
import { runtimeFlags } from '../src/backends/runtime-flags.js';
import { spareLaunch } from '../src/pool/spare-launch.js';
import { chooseRuntime, requestedRuntime } from '../src/runner/runtime-choice.js';
import { directLaunch } from './support/launches.js';

const helperEnv = { PATH: '/usr/bin:/bin' };

describe('helper runtime choice', () => {
  it('takes the option, else FS_SANDBOX_HELPER_RUNTIME, else node (until Bun keeps inherited descriptors out)', () => {
    expect(requestedRuntime('node', { FS_SANDBOX_HELPER_RUNTIME: 'bun' })).toBe('node');
    expect(requestedRuntime(undefined, { FS_SANDBOX_HELPER_RUNTIME: 'bun' })).toBe('bun');
    expect(requestedRuntime(undefined, {})).toBe('node');
  });

  it('refuses an unknown choice by name, as invalid_params', () => {
    expect(() => requestedRuntime(undefined, { FS_SANDBOX_HELPER_RUNTIME: 'deno' })).toThrow(
      expect.objectContaining({ kind: 'invalid_params', message: expect.stringContaining('`deno`') }),
    );
  });

  it('runs node when node is asked for, saying so', async () => {
    const chosen = await chooseRuntime('node', 'linux', helperEnv);
    expect(chosen.executable.kind).toBe('node');
    expect(chosen.reason).toBe('node: the default, or asked for');
  });

  it('falls back to node under auto where Bun does not run the helper (macOS, Windows), and says why', async () => {
    for (const os of ['macos', 'windows'] as const) {
      const chosen = await chooseRuntime('auto', os, helperEnv);
      expect(chosen.executable.kind).toBe('node');
      expect(chosen.reason).toMatch(/only on Linux/);
    }
  });

  it('refuses bun asked for explicitly where it cannot run, never switching to node silently', async () => {
    await expect(chooseRuntime('bun', 'macos', helperEnv)).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
    });
    await expect(chooseRuntime('bun', 'linux', helperEnv, 'ia32')).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
    });
  });

  it.skipIf(process.platform !== 'linux' || process.arch !== 'x64')(
    'takes the installed Bun package under auto on Linux x64 once its self-check passed',
    async () => {
      const chosen = await chooseRuntime('auto', 'linux', helperEnv);
      expect(chosen.executable.kind).toBe('bun');
      expect(chosen.executable.path).toMatch(/@oven\/bun-linux-x64(-musl)?\/bin\/bun$/);
      expect(chosen.reason).toMatch(/passed the self-check/);
    },
  );
});

describe('runtime flags', () => {
  it('hardens Bun against the cwd: no bunfig, no tsconfig, no .env, no auto-install, no addons', () => {
    expect(runtimeFlags('bun')).toEqual([
      '--config=/dev/null',
      '--tsconfig-override=/dev/null',
      '--no-env-file',
      '--no-install',
      '--no-addons',
    ]);
    expect(runtimeFlags('node')).toEqual([]);
  });

  it('gives a node spare --no-lazy and a Bun spare no node flag', () => {
    const node = directLaunch({ sandboxProgram: 'bwrap', runtime: '/usr/bin/node', helper: 'h.cjs' });
    expect(spareLaunch(node).runtimeArgs).toEqual(['--no-lazy']);
    const bun = { ...node, runtimeKind: 'bun' as const, runtimeArgs: runtimeFlags('bun') };
    expect(spareLaunch(bun).runtimeArgs).toEqual(runtimeFlags('bun'));
  });
});
