import type { SandboxPlan } from '@fs-sandbox/policy';

/** A plan for `os` that shows nothing (no read, write or deny, no cwd), with `overrides` on top. */
export function emptyPlan(os: SandboxPlan['os'], overrides: Partial<SandboxPlan> = {}): SandboxPlan {
  return {
    os,
    fullDiskRead: false,
    readableRoots: [],
    writableRoots: [],
    deniedPaths: [],
    denyGlobs: [],
    cwd: null,
    ...overrides,
  };
}
