import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXECUTABLE_SURFACE, FsError, type PathGuard, type SandboxPlan } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCwdShown, assertProgramShown } from '../src/runner/command-program.js';

/** The look-up of a command's program among the files a plan shows, on real files. */

let dir: string;
let shown: string;
let hidden: string;
let denied: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-command-program-'));
  shown = join(dir, 'shown');
  hidden = join(dir, 'hidden');
  await mkdir(shown);
  await mkdir(hidden);
  await writeFile(join(shown, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  await writeFile(join(shown, 'data'), 'x\n', { mode: 0o644 });
  await writeFile(join(hidden, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  await writeFile(join(shown, 'denied-tool'), '#!/bin/sh\n', { mode: 0o755 });
  denied = join(shown, 'denied-tool');
  // A link inside the shown root to a program outside it: what counts is where it leads.
  await symlink(join(hidden, 'tool'), join(shown, 'link-out'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const plan = (over: Partial<SandboxPlan> = {}): SandboxPlan => ({
  os: 'linux',
  fullDiskRead: false,
  readableRoots: [shown],
  writableRoots: [],
  deniedPaths: [denied],
  denyGlobs: [],
  cwd: shown,
  ...over,
});
const guard = (): PathGuard => ({
  entries: [{ path: denied, reason: 'denied', rule: `denied path ${denied}` }],
  denyGlobs: [],
  deniedIdentities: [],
  surface: { entries: [...EXECUTABLE_SURFACE], home: null },
});

function refusal(program: string, env: Record<string, string> = {}, over: Partial<SandboxPlan> = {}) {
  try {
    assertProgramShown(program, env, shown, plan(over), guard());
    return null;
  } catch (error) {
    if (!(error instanceof FsError)) throw error;
    return (error as FsError).extra?.kind;
  }
}

describe('assertProgramShown', () => {
  it('finds a program by path, relative to the cwd, and along the command PATH', () => {
    expect(refusal(join(shown, 'tool'))).toBeNull();
    expect(refusal('./tool')).toBeNull();
    expect(refusal('tool', { PATH: `/nowhere:${shown}` })).toBeNull();
    // An empty PATH entry is the cwd, as execvp reads it.
    expect(refusal('tool', { PATH: ':/nowhere' })).toBeNull();
  });

  it('refuses what the plan does not show, what is denied, and a link that leads outside', () => {
    expect(refusal(join(hidden, 'tool'))).toBe('spawnNotFound');
    expect(refusal('tool', { PATH: hidden })).toBe('spawnNotFound');
    expect(refusal(denied)).toBe('spawnNotFound');
    expect(refusal(join(shown, 'link-out'))).toBe('spawnNotFound');
    expect(refusal('no-such-tool', { PATH: shown })).toBe('spawnNotFound');
    expect(refusal(join(hidden, 'tool'), {}, { fullDiskRead: true })).toBeNull();
  });

  it('a shown file that is not executable, or a directory, is spawnPermissionDenied', () => {
    expect(refusal(join(shown, 'data'))).toBe('spawnPermissionDenied');
    expect(refusal('data', { PATH: shown })).toBe('spawnPermissionDenied');
    expect(refusal(shown)).toBe('spawnPermissionDenied');
  });

  it('leaves programs on the mounts the sandbox makes itself to the sandbox', () => {
    expect(refusal('/proc/self/exe')).toBeNull();
    expect(refusal('/dev/null/x')).toBeNull();
  });
});

describe('assertCwdShown', () => {
  it('judges the cwd where it leads, not how it is spelled', async () => {
    await symlink(hidden, join(shown, 'dir-out'));
    await mkdir(join(shown, 'sub'));
    expect(() => assertCwdShown(join(shown, 'sub'), plan(), guard())).not.toThrow();
    // A missing cwd is left to the launch's own refusal.
    expect(() => assertCwdShown(join(shown, 'missing'), plan(), guard())).not.toThrow();
    expect(() => assertCwdShown(join(shown, 'dir-out'), plan(), guard())).toThrow(
      /cwd .*dir-out is not a directory the sandbox shows \(it leads to .*hidden\)/,
    );
    // Full-disk read shows it, unless it is denied.
    expect(() => assertCwdShown(join(shown, 'dir-out'), plan({ fullDiskRead: true }), guard())).not.toThrow();
  });
});
