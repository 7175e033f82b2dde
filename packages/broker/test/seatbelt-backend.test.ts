import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import { createSeatbeltBackend } from '../src/backends/macos/seatbelt-backend.js';

const hasSandboxExec = existsSync('/usr/bin/sandbox-exec');

describe('Seatbelt backend', () => {
  it('names itself for the runner and the audit log', () => {
    const backend = createSeatbeltBackend();
    expect([backend.name, backend.os]).toEqual(['seatbelt', 'macos']);
  });

  // The refusal needs a machine without sandbox-exec; on macOS the e2e suite covers the real launch.
  it.skipIf(hasSandboxExec)(
    'refuses with sandbox_unavailable when /usr/bin/sandbox-exec is missing (skipped: this machine has sandbox-exec)',
    async () => {
      const plan = {
        os: 'macos' as const,
        fullDiskRead: true,
        readableRoots: [],
        writableRoots: [],
        deniedPaths: [],
        denyGlobs: [],
        cwd: null,
      };
      await expect(
        createSeatbeltBackend().prepare(plan, {
          executable: { kind: 'node', path: process.execPath },
          helperBundle: '/x/helper.cjs',
          ripgrepPath: null,
          env: {},
        }),
      ).rejects.toMatchObject({
        kind: 'sandbox_unavailable',
        message: '/usr/bin/sandbox-exec is missing or not executable',
      });
    },
  );

  it('reads the machine only through its checks, so another host can be described by assumptions', async () => {
    const plan = {
      os: 'macos' as const,
      fullDiskRead: true,
      readableRoots: [],
      writableRoots: [{ root: '/Users/me/w', readOnlySubpaths: [], protectedNames: [] }],
      deniedPaths: [],
      denyGlobs: [],
      cwd: null,
    };
    const runtime: HelperRuntime = {
      executable: { kind: 'node', path: '/usr/local/bin/node' },
      helperBundle: '/x/helper.cjs',
      ripgrepPath: null,
      env: {},
    };
    const asSpelled = { realpath: async (path: string) => path, profileSpelling: (path: string) => path };
    const launch = await createSeatbeltBackend({
      checkSandboxExec: async () => {},
      paths: asSpelled,
    }).prepare(plan, runtime);
    expect(launch.sandboxProgram).toBe('/usr/bin/sandbox-exec');
    // The same plan on a host where the writable root is a symlink is refused, not rewritten.
    const linked = {
      ...asSpelled,
      realpath: async (path: string) => path.replace('/Users/me/w', '/Volumes/w'),
    };
    await expect(
      createSeatbeltBackend({ checkSandboxExec: async () => {}, paths: linked }).prepare(plan, runtime),
    ).rejects.toMatchObject({ kind: 'sandbox_unavailable', message: expect.stringContaining('symlink') });
  });
});
