import type { PathGuard } from '@fs-sandbox/policy/core';
import { EXECUTABLE_SURFACE } from '@fs-sandbox/policy/core';
import { describe, expect, it } from 'vitest';
import { policyExcludes } from '../../src/ripgrep/rg-excludes.js';

const glob = (pattern: string) => ({ pattern, source: '^$', flags: '' });

const GUARD: PathGuard = {
  entries: [
    { path: '/w', reason: 'writable_root', rule: 'writable root /w' },
    { path: '/w/.git', reason: 'protected', rule: 'protected metadata path .git' },
    { path: '/w/sub/secret', reason: 'denied', rule: 'denied by entry /w/sub/secret' },
    { path: '/w/we[ird]*', reason: 'denied', rule: 'denied' },
    { path: '/w/bad\udcff', reason: 'denied', rule: 'denied' },
    { path: '/elsewhere/secret', reason: 'denied', rule: 'denied' },
    { path: '/w/node_modules', reason: 'own_code', rule: 'own code' },
  ],
  denyGlobs: [glob('/w/**/*.env'), glob('/**/*.pem'), glob('/other/**/*.key'), glob('/w*/x')],
  deniedIdentities: [],
  surface: { entries: [...EXECUTABLE_SURFACE], home: null },
};

describe('policyExcludes', () => {
  it('anchors denied and protected paths below the root, escaping glob characters', () => {
    expect(policyExcludes(GUARD, '/w', 'linux')).toEqual(
      ['/**/*.env', '/.git', '/sub/secret', '/we\\[ird\\]\\*', '**/*.pem'].sort(),
    );
  });

  it('keeps what a ripgrep glob cannot say for the kernel masks alone', () => {
    const excludes = policyExcludes(GUARD, '/w', 'linux');
    expect(excludes.some((glob) => glob.includes('\udcff'))).toBe(false);
    expect(excludes.some((glob) => glob.includes('key') || glob.includes('node_modules'))).toBe(false);
  });

  it('re-anchors at a deeper root and leaves out what lies elsewhere', () => {
    expect(policyExcludes(GUARD, '/w/sub', 'linux')).toEqual(['**/*.env', '**/*.pem', '/secret'].sort());
    expect(policyExcludes(null, '/w', 'linux')).toEqual([]);
  });
});
