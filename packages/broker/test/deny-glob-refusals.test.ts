import {
  buildSandboxPlan,
  FsError,
  type HostOs,
  parseDenyGlob,
  resolveSandboxContext,
  type SandboxPlan,
} from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import { expandDenyGlobs } from '../src/backends/linux/path-facts.js';
import { buildSeatbeltProfile } from '../src/backends/macos/seatbelt-profile.js';
import { acceptWindowsPlan } from '../src/backends/windows/windows-level.js';

/** Spellings each platform must refuse alike (the policy's unit tests cover every reason). */
const POSIX_PATTERNS = [
  '/w/a/../secrets/**',
  '/w/keys/',
  '/w//key',
  '/w/{a,b',
  '/w/[ab',
  '/w/!(x).pem',
  '!/w/*.pem',
  '/w/a**',
];
const WINDOWS_PATTERNS = POSIX_PATTERNS.map((pattern) => pattern.replace('/w/', 'C:\\w\\'));

function failure(run: () => unknown): { kind: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return { kind: (error as FsError).kind, message: (error as FsError).message };
  }
  throw new Error('expected a refusal');
}

function plan(os: HostOs, glob: string, overrides: Partial<SandboxPlan> = {}): SandboxPlan {
  return {
    os,
    fullDiskRead: true,
    readableRoots: [],
    writableRoots: [],
    deniedPaths: [],
    denyGlobs: [glob],
    cwd: null,
    ...overrides,
  };
}

const runtime = (nodePath: string, helperBundle: string): HelperRuntime => ({
  executable: { kind: 'node', path: nodePath },
  helperBundle,
  ripgrepPath: null,
  env: {},
});

describe('unenforceable deny globs are refused alike by every consumer', () => {
  it.each(POSIX_PATTERNS)(
    '%j: the policy, the plan, bwrap and Seatbelt give the same invalid_params',
    (pattern) => {
      const expected = failure(() => parseDenyGlob(pattern, 'linux'));
      expect(expected.kind).toBe('invalid_params');
      const context = {
        permissions: {
          type: 'managed' as const,
          network: 'restricted' as const,
          file_system: {
            type: 'restricted' as const,
            entries: [
              {
                path: { type: 'special' as const, value: { kind: 'root' as const } },
                access: 'read' as const,
              },
              { path: { type: 'glob_pattern' as const, pattern }, access: 'deny' as const },
            ],
          },
        },
        windowsSandboxLevel: 'disabled' as const,
      };
      expect(failure(() => resolveSandboxContext(context, 'linux'))).toEqual(expected);
      expect(failure(() => expandDenyGlobs([pattern], () => true))).toEqual(expected);
      expect(
        failure(() =>
          buildSeatbeltProfile(plan('macos', pattern), runtime('/usr/local/bin/node', '/opt/h.cjs')),
        ),
      ).toEqual(expected);
    },
  );

  it.each(WINDOWS_PATTERNS)('%j: the restricted-token plan gives the policy invalid_params', (pattern) => {
    const expected = failure(() => parseDenyGlob(pattern, 'windows'));
    expect(expected.kind).toBe('invalid_params');
    expect(failure(() => acceptWindowsPlan(plan('windows', pattern), 'restricted-token'))).toEqual(expected);
    // Before the level's own refusal of any deny glob, which would hide the reason.
    expect(failure(() => acceptWindowsPlan(plan('windows', pattern), 'elevated')).kind).toBe(
      'invalid_params',
    );
  });

  it('a plan built from a valid glob reaches the builders', () => {
    const resolved = resolveSandboxContext(
      {
        permissions: {
          type: 'managed',
          network: 'restricted',
          file_system: {
            type: 'restricted',
            entries: [
              { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
              { path: { type: 'glob_pattern', pattern: '/w/**/*.{pem,key}' }, access: 'deny' },
            ],
          },
        },
        windowsSandboxLevel: 'disabled',
      },
      'macos',
    );
    if (!resolved.sandboxed) throw new Error('expected a sandboxed context');
    const profile = buildSeatbeltProfile(
      buildSandboxPlan(resolved, 'macos'),
      runtime('/usr/local/bin/node', '/opt/h.cjs'),
    );
    expect(profile.params.find(([name]) => name === 'DENY_GLOB_0')?.[1]).toContain('|');
  });
});
