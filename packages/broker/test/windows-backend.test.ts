import { fileURLToPath } from 'node:url';
import type { SandboxPlan } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import {
  createWindowsBackend,
  installedWindowsLauncher,
} from '../src/backends/windows/restricted-token-backend.js';

const RUNTIME: HelperRuntime = {
  executable: { kind: 'node', path: 'C:\\nodejs\\node.exe' },
  helperBundle: 'C:\\fs\\helper.cjs',
  ripgrepPath: null,
  env: { Path: 'C:\\Windows' },
};
const FULL_READ: SandboxPlan = {
  os: 'windows',
  fullDiskRead: true,
  readableRoots: [],
  writableRoots: [{ root: 'C:\\w', readOnlySubpaths: [], protectedNames: ['.git'] }],
  deniedPaths: [],
  denyGlobs: [],
  cwd: null,
};
const READ_RESTRICTED: SandboxPlan = { ...FULL_READ, fullDiskRead: false, deniedPaths: ['C:\\w\\.env'] };

describe('Windows backend selection and preparation', () => {
  it('a level without a sandbox refuses every plan with sandbox_unavailable', async () => {
    for (const level of ['disabled', 'mxc'] as const) {
      await expect(createWindowsBackend(level).prepare(FULL_READ, RUNTIME)).rejects.toMatchObject({
        kind: 'sandbox_unavailable',
        message: expect.stringContaining(`\`${level}\``),
      });
    }
  });

  it('refuses a read-restricted plan for that reason, before looking for the launcher', async () => {
    const backend = createWindowsBackend('restricted-token', {
      locateLauncher: () => installedWindowsLauncher('C:\\missing\\launcher.js'),
    });
    await expect(backend.prepare(READ_RESTRICTED, RUNTIME)).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
      message: expect.stringContaining('cannot enforce read restrictions'),
    });
  });

  it('refuses when the launcher has not been built', async () => {
    const backend = createWindowsBackend('restricted-token', {
      locateLauncher: () => installedWindowsLauncher('/nonexistent/windows-launcher.js'),
    });
    await expect(backend.prepare(FULL_READ, RUNTIME)).rejects.toMatchObject({
      kind: 'sandbox_unavailable',
      message: expect.stringContaining('is missing; build it'),
    });
  });

  it('builds the launch when the launcher and koffi are present', async () => {
    const inBrokerPackage = fileURLToPath(import.meta.url);
    const backend = createWindowsBackend('elevated', {
      locateLauncher: () => installedWindowsLauncher(inBrokerPackage),
    });
    const spec = await backend.prepare(FULL_READ, RUNTIME);
    expect([backend.name, backend.os, spec.backend, spec.sandboxProgram, spec.sandboxArgs[0]]).toEqual([
      'restricted-token',
      'windows',
      'restricted-token',
      RUNTIME.executable.path,
      inBrokerPackage,
    ]);
  });
});
