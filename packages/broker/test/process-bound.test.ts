import { describe, expect, it } from 'vitest';
import {
  cgroupDirectory,
  describeProcessBound,
  detectProcessBound,
  type ProcessBoundHost,
  processBoundFor,
} from '../src/runner/process-bound.js';

const HYBRID_CGROUPS = '9:name=systemd:/\n8:pids:/\n4:memory:/x\n0::/\n';
const HYBRID_MOUNTS = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
const V2_CGROUPS = '0::/user.slice/user-1000.slice/session-3.scope\n';
const V2_MOUNTS = '28 22 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';

function host(overrides: Partial<ProcessBoundHost> & { files?: Record<string, string> }): ProcessBoundHost {
  const files = overrides.files ?? {};
  return {
    uid: overrides.uid ?? 1000,
    readText: (path) => files[path] ?? null,
    writable: overrides.writable ?? (() => false),
    executable: overrides.executable ?? (() => false),
  };
}

describe('cgroupDirectory', () => {
  it("finds this process's cgroup in the v1 pids hierarchy and in v2", () => {
    expect(cgroupDirectory(HYBRID_CGROUPS, HYBRID_MOUNTS, 1)).toBe('/sys/fs/cgroup/pids');
    expect(cgroupDirectory(HYBRID_CGROUPS, HYBRID_MOUNTS, 2)).toBe('/sys/fs/cgroup/unified');
    expect(cgroupDirectory(V2_CGROUPS, V2_MOUNTS, 2)).toBe(
      '/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope',
    );
    expect(cgroupDirectory(V2_CGROUPS, V2_MOUNTS, 1)).toBeNull();
  });

  it('maps a path below a mount that shows only part of the hierarchy, and unescapes mount points', () => {
    const mounts = '40 31 0:36 /docker/abc /sys/fs/cgroup/my\\040pids rw - cgroup cgroup rw,pids';
    expect(cgroupDirectory('3:pids:/docker/abc/task\n', mounts, 1)).toBe('/sys/fs/cgroup/my pids/task');
    expect(cgroupDirectory('3:pids:/elsewhere\n', mounts, 1)).toBeNull();
  });
});

describe('detectProcessBound', () => {
  it('takes a cgroup v2 that delegates pids and is writable first', () => {
    const dir = '/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope';
    const found = detectProcessBound(
      host({
        files: {
          '/proc/self/cgroup': V2_CGROUPS,
          '/proc/self/mountinfo': V2_MOUNTS,
          [`${dir}/cgroup.subtree_control`]: 'cpu pids\n',
        },
        writable: (path) => path === dir,
      }),
    );
    expect(found).toEqual({ kind: 'cgroup', version: 2, parent: dir });
  });

  it('takes the v1 pids hierarchy where it is writable (root), else RLIMIT_NPROC for another uid', () => {
    const files = { '/proc/self/cgroup': HYBRID_CGROUPS, '/proc/self/mountinfo': HYBRID_MOUNTS };
    expect(detectProcessBound(host({ uid: 0, files, writable: () => true }))).toEqual({
      kind: 'cgroup',
      version: 1,
      parent: '/sys/fs/cgroup/pids',
    });
    expect(
      detectProcessBound(host({ uid: 65534, files, executable: (path) => path === '/usr/bin/prlimit' })),
    ).toEqual({
      kind: 'rlimit',
      prlimit: '/usr/bin/prlimit',
    });
  });

  it('says why there is none: root without a cgroup it may use, or no prlimit', () => {
    const files = { '/proc/self/cgroup': V2_CGROUPS, '/proc/self/mountinfo': V2_MOUNTS };
    const root = detectProcessBound(host({ uid: 0, files, executable: () => true }));
    expect(root.kind).toBe('none');
    expect(root.kind === 'none' && root.why).toMatch(
      /does not delegate the pids controller.*never applies to root/,
    );
    const user = detectProcessBound(host({ uid: 1000, files }));
    expect(user.kind === 'none' && user.why).toMatch(/prlimit \(util-linux\) is not installed/);
  });
});

describe('processBoundFor', () => {
  it('gives a command the bound of the mechanism, or none when turned off or unavailable', () => {
    expect(processBoundFor(64, { kind: 'cgroup', version: 1, parent: '/p' })).toEqual({
      kind: 'cgroup',
      parent: '/p',
      max: 64,
    });
    expect(processBoundFor(64, { kind: 'rlimit', prlimit: '/usr/bin/prlimit' })).toMatchObject({
      kind: 'rlimit',
    });
    expect(processBoundFor(null, { kind: 'rlimit', prlimit: '/usr/bin/prlimit' })).toBeNull();
    expect(processBoundFor(64, { kind: 'none', why: 'x' })).toBeNull();
    expect(describeProcessBound({ kind: 'none', why: 'no cgroup' }, 64)).toBe('none: no cgroup');
    expect(describeProcessBound({ kind: 'cgroup', version: 1, parent: '/p' }, null)).toMatch(/turned off/);
  });
});
