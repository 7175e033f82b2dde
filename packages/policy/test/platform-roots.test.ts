import { describe, expect, it } from 'vitest';
import type { HostOs } from '../src/host-os.js';
import { isAbsoluteNative } from '../src/native-path.js';
import { minimalReadRootCandidates } from '../src/platform-roots.js';

describe('minimalReadRootCandidates', () => {
  it('lists the documented Linux roots', () => {
    expect(minimalReadRootCandidates('linux')).toEqual([
      '/bin',
      '/sbin',
      '/usr',
      '/etc',
      '/lib',
      '/lib64',
      '/nix/store',
      '/run/current-system/sw',
    ]);
  });
  it('lists the documented Windows roots', () => {
    expect(minimalReadRootCandidates('windows')).toEqual([
      'C:\\Windows',
      'C:\\Program Files',
      'C:\\Program Files (x86)',
      'C:\\ProgramData',
    ]);
  });
  it.each(['linux', 'macos', 'windows'] as HostOs[])('gives absolute, non-temporary paths on %s', (os) => {
    for (const root of minimalReadRootCandidates(os)) {
      expect(isAbsoluteNative(os, root)).toBe(true);
      expect(root).not.toMatch(/tmp|home|Users/i);
    }
  });
  it('returns a copy callers may not corrupt', () => {
    minimalReadRootCandidates('linux').push('/home');
    expect(minimalReadRootCandidates('linux')).not.toContain('/home');
  });
});
