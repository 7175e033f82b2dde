import { describe, expect, it } from 'vitest';
import { assessPatchSafety, type PatchPolicyScope } from '../../src/patch/assess-patch.js';
import type { PermissionProfile } from '../../src/schemas/sandbox-context.js';

const workspace: PermissionProfile = {
  type: 'managed',
  network: 'restricted',
  file_system: {
    type: 'restricted',
    entries: [
      { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
      { path: { type: 'path', path: 'file:///w' }, access: 'write' },
    ],
  },
} as PermissionProfile;
const managed: PatchPolicyScope = { kind: 'managed', profile: workspace, windowsSandboxLevel: 'disabled' };
const inside = [{ path: '/w/a.txt' }];
const outside = [{ path: '/w/a.txt' }, { path: '/w/b.txt', movePath: '/etc/x' }];

describe('assessPatchSafety branches', () => {
  it('empty patch → reject', () => {
    expect(assessPatchSafety([], 'on-request', managed, 'linux')).toEqual({
      decision: 'reject',
      reason: 'empty patch',
    });
  });
  it('unless-trusted → ask, even inside', () => {
    expect(assessPatchSafety(inside, 'unless-trusted', managed, 'linux').decision).toBe('ask');
  });
  it('constrained + managed + platform sandbox → approve sandboxed', () => {
    expect(assessPatchSafety(inside, 'on-request', managed, 'linux')).toEqual({
      decision: 'approve',
      sandboxed: true,
    });
  });
  it('constrained + managed without a platform sandbox (Windows level disabled) → ask', () => {
    const windows = structuredClone(workspace) as Extract<PermissionProfile, { type: 'managed' }>;
    if (windows.file_system.type === 'restricted') {
      windows.file_system.entries[1] = { path: { type: 'path', path: 'file:///C:/w' }, access: 'write' };
    }
    const scope: PatchPolicyScope = { kind: 'managed', profile: windows, windowsSandboxLevel: 'disabled' };
    expect(assessPatchSafety([{ path: 'C:\\w\\a.txt' }], 'never', scope, 'windows').decision).toBe('ask');
  });
  it('disabled/external (unisolated) → approve without a sandbox', () => {
    expect(assessPatchSafety(outside, 'never', { kind: 'unisolated' }, 'linux')).toEqual({
      decision: 'approve',
      sandboxed: false,
    });
  });
  it('outside (a move destination) + never → reject', () => {
    const safety = assessPatchSafety(outside, 'never', managed, 'linux');
    expect(safety).toMatchObject({ decision: 'reject' });
    expect(JSON.stringify(safety)).toContain('/etc/x');
  });
  it('outside + granular without sandbox_approval → reject; with it → ask', () => {
    expect(
      assessPatchSafety(outside, { granular: { sandbox_approval: false } }, managed, 'linux').decision,
    ).toBe('reject');
    expect(
      assessPatchSafety(outside, { granular: { sandbox_approval: true } }, managed, 'linux').decision,
    ).toBe('ask');
  });
  it('outside + on-request → ask; outside + on-failure → approve sandboxed', () => {
    expect(assessPatchSafety(outside, 'on-request', managed, 'linux').decision).toBe('ask');
    expect(assessPatchSafety(outside, 'on-failure', managed, 'linux')).toEqual({
      decision: 'approve',
      sandboxed: true,
    });
  });
  it('a protected .git path is not writable → ask', () => {
    expect(assessPatchSafety([{ path: '/w/.git/hooks/x' }], 'on-request', managed, 'linux').decision).toBe(
      'ask',
    );
  });
});
