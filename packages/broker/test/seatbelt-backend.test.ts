import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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
          nodePath: process.execPath,
          helperBundle: '/x/helper.cjs',
          env: {},
        }),
      ).rejects.toMatchObject({
        kind: 'sandbox_unavailable',
        message: '/usr/bin/sandbox-exec is missing or not executable',
      });
    },
  );
});
