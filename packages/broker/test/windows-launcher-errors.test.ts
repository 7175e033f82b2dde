import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWindowsLaunchPlanData } from '../src/backends/windows/windows-launch-plan.js';
import { acceptWindowsPlan } from '../src/backends/windows/windows-level.js';

const run = promisify(execFile);
const brokerRoot = fileURLToPath(new URL('..', import.meta.url));
let dir: string;
let launcher: string;

// The launcher is bundled the way the package build does it and run as a real process: when it
// cannot build the sandbox it must answer in the helper's place with one typed error line and exit 0.
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'windows-launcher-'));
  launcher = join(dir, 'windows-launcher.mjs');
  await build({
    absWorkingDir: brokerRoot,
    entryPoints: ['src/backends/windows/launcher/windows-launcher-main.ts'],
    outfile: launcher,
    bundle: true,
    platform: 'node',
    format: 'esm',
    conditions: ['source'],
    external: ['koffi'],
    logLevel: 'silent',
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function launch(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [launcher, ...args], { env: { PATH: process.env.PATH ?? '' } });
}

describe('Windows launcher failure replies', () => {
  it('answers a malformed plan with one sandbox_unavailable reply line and exit status 0', async () => {
    const { stdout, stderr } = await launch('{"version":1,"tokenFlags":[]}');
    expect(stderr).toBe('');
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(stdout)).toEqual({
      status: 'error',
      payload: {
        code: -32603,
        message: 'the Windows launcher got a malformed plan: unknown level',
        data: { errorKind: 'sandbox_unavailable' },
      },
    });
  });

  it.skipIf(process.platform === 'win32')(
    'refuses to run anywhere but Windows, never starting the helper unsandboxed (skipped on Windows: the e2e suite runs it for real)',
    async () => {
      const accepted = acceptWindowsPlan(
        {
          os: 'windows',
          fullDiskRead: true,
          readableRoots: [],
          writableRoots: [],
          deniedPaths: [],
          denyGlobs: [],
          cwd: null,
        },
        'restricted-token',
      );
      const plan = buildWindowsLaunchPlanData(accepted, {
        executable: { kind: 'node', path: 'C:\\node\\node.exe' },
        helperBundle: 'C:\\fs\\helper.cjs',
        ripgrepPath: null,
        env: {},
      });
      const { stdout } = await launch(JSON.stringify(plan), 'C:\\node\\node.exe', 'C:\\fs\\helper.cjs');
      expect(JSON.parse(stdout).payload).toEqual({
        code: -32603,
        message: `the restricted-token launcher runs only on Windows, not ${process.platform}`,
        data: { errorKind: 'sandbox_unavailable' },
      });
    },
  );
});
