import type { SandboxPlan } from '@fs-sandbox/policy';
import { FsError } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import {
  type BwrapSandbox,
  buildBwrapSandbox,
  bwrapFactPaths,
  ISOLATION_ARGS,
} from '../src/backends/linux/bwrap-args.js';
import type { PathFact, PathFacts } from '../src/backends/linux/path-facts.js';
import { emptyPlan } from './support/plans.js';

const runtime: HelperRuntime = {
  executable: { kind: 'node', path: '/usr/bin/node' },
  helperBundle: '/opt/fs/helper.cjs',
  ripgrepPath: '/opt/fs/rg',
  env: { TMPDIR: '/tmp', PATH: '/usr/bin:/bin' },
};

const dir: PathFact = { kind: 'directory', linkText: null, symlinksCrossed: [] };
const file: PathFact = { kind: 'file', linkText: null, symlinksCrossed: [] };
const missing: PathFact = { kind: 'missing', linkText: null, symlinksCrossed: [] };
const topLink = (path: string, target: string): PathFact => ({
  kind: 'directory',
  linkText: target,
  symlinksCrossed: [path],
});

/** The kernel's procfs and sysfs entries as a typical machine has them (some absent). */
const KERNEL_FACTS: Record<string, PathFact> = {
  '/proc/bus': dir,
  '/proc/fs': dir,
  '/proc/irq': dir,
  '/proc/sys': dir,
  '/proc/sysrq-trigger': file,
  '/proc/acpi': dir,
  '/proc/asound': missing,
  '/proc/interrupts': file,
  '/proc/kcore': file,
  '/proc/keys': file,
  '/proc/latency_stats': missing,
  '/proc/sched_debug': file,
  '/proc/scsi': dir,
  '/proc/timer_list': file,
  '/proc/timer_stats': missing,
  '/sys/devices/virtual/powercap': dir,
  '/sys/firmware': dir,
};

/** Facts for every path the builder asks about; unspecified paths are directories. */
function factsFor(
  plan: SandboxPlan,
  known: Record<string, PathFact>,
  writableRootRealPaths = plan.writableRoots.map((w) => w.root),
  denyGlobMatches: string[] = [],
  cpuKernelPaths: string[] = [],
): PathFacts {
  const paths = new Map<string, PathFact>();
  for (const path of bwrapFactPaths(plan, runtime, denyGlobMatches, cpuKernelPaths))
    paths.set(path, known[path] ?? KERNEL_FACTS[path] ?? dir);
  return { paths, writableRootRealPaths, denyGlobMatches, cpuKernelPaths };
}

/** bwrap's own arguments for a plan (they end at `--`; node's command line follows). */
function bwrapArgs(p: SandboxPlan, facts: PathFacts, r: HelperRuntime = runtime): string[] {
  return buildBwrapSandbox(p, facts, r).args;
}

function plan(overrides: Partial<SandboxPlan>): SandboxPlan {
  return emptyPlan('linux', overrides);
}

const PROTECTED = ['.git', '.agents', '.codex'];

/** A plan and the host facts it is built against (unlisted paths are directories). */
interface GoldenCase {
  /** What the reviewed argv shows. */
  shows: string;
  plan: SandboxPlan;
  facts: Record<string, PathFact>;
  writableRootRealPaths?: string[];
  denyGlobMatches?: string[];
}

const RUNTIME_FILES: Record<string, PathFact> = { '/usr/bin/node': file, '/opt/fs/helper.cjs': file };

const GOLDEN: Record<string, GoldenCase> = {
  'workspace-tmpfs-base': {
    shows: 'workspace sandbox without full read: tmpfs base, roots, writable bind, masks, read-only root',
    plan: plan({
      readableRoots: ['/bin', '/etc', '/opt/fs/helper.cjs', '/usr'],
      writableRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: PROTECTED }],
      deniedPaths: ['/w/.env', '/w/secret'],
      cwd: '/w',
    }),
    facts: {
      ...RUNTIME_FILES,
      '/bin': topLink('/bin', 'usr/bin'),
      '/w/.env': file,
      '/w/.agents': missing,
      '/w/.codex': missing,
    },
  },
  'full-disk-read': {
    shows: 'full-disk read: the host tree read-only as base, no final remount, redundant reads dropped',
    plan: plan({
      fullDiskRead: true,
      writableRoots: [{ root: '/w', readOnlySubpaths: ['/w/docs'], protectedNames: PROTECTED }],
      cwd: '/w/src',
    }),
    facts: { ...RUNTIME_FILES, '/w/.git': missing, '/w/.agents': missing, '/w/.codex': missing },
  },
  'root-read-narrowed': {
    shows: 'root:read narrowed by a deny (readable root "/") also uses the read-only host tree',
    plan: plan({ readableRoots: ['/'], deniedPaths: ['/home/u/.ssh'], cwd: '/home/u' }),
    facts: RUNTIME_FILES,
  },
  'deny-with-deeper-grant': {
    shows: 'a denied directory with a deeper grant is traversable (0111) and the grant is mounted after it',
    plan: plan({
      fullDiskRead: false,
      readableRoots: ['/usr'],
      writableRoots: [
        { root: '/w', readOnlySubpaths: [], protectedNames: [] },
        { root: '/w/private/out', readOnlySubpaths: [], protectedNames: [] },
      ],
      deniedPaths: ['/w/private'],
    }),
    facts: RUNTIME_FILES,
  },
  'deny-glob-matches': {
    shows: 'the current matches of a deny glob are masked like denied paths',
    plan: plan({
      fullDiskRead: true,
      writableRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: [] }],
      denyGlobs: ['/w/**/*.env'],
    }),
    facts: { ...RUNTIME_FILES, '/w/.env': file },
    writableRootRealPaths: ['/w'],
    denyGlobMatches: ['/w/.env', '/w/config/keys'],
  },
};

function buildGolden(golden: GoldenCase): BwrapSandbox {
  const facts = factsFor(golden.plan, golden.facts, golden.writableRootRealPaths, golden.denyGlobMatches);
  return buildBwrapSandbox(golden.plan, facts, runtime);
}

// Update after a reviewed change with `pnpm exec vitest run packages/broker/test/bwrap-args.test.ts -u`,
// then review the golden diff like code: it is the exact sandbox every request of that shape gets.
describe('buildBwrapSandbox golden files', () => {
  for (const [name, golden] of Object.entries(GOLDEN)) {
    it(`${name}: ${golden.shows}`, async () => {
      await expect(`${JSON.stringify(buildGolden(golden), null, 2)}\n`).toMatchFileSnapshot(
        `./golden/bwrap-${name}.json`,
      );
    });
  }

  it('starts every argv with the isolation options and ends it at `--` (node follows)', () => {
    for (const golden of Object.values(GOLDEN)) {
      const { args } = buildGolden(golden);
      expect(args.slice(0, ISOLATION_ARGS.length)).toEqual(ISOLATION_ARGS);
      expect(args.at(-1)).toBe('--');
    }
  });

  it('records what it mounts from the host as it emits it: mount points in argv order, roots without runtime files and masks', () => {
    const { mountPoints, boundRoots } = buildGolden(GOLDEN['workspace-tmpfs-base'] as GoldenCase);
    // Not the base tmpfs, /dev, /proc or the /bin symlink: none of them shows host content.
    expect(mountPoints).toEqual([
      '/etc',
      '/opt/fs/helper.cjs',
      '/opt/fs/rg',
      '/usr',
      '/w',
      '/w/.env',
      '/w/.git',
      '/w/secret',
    ]);
    expect(boundRoots).toEqual(['/etc', '/usr', '/w', '/w/.git']);
    const fullRead = buildGolden(GOLDEN['full-disk-read'] as GoldenCase);
    expect([fullRead.mountPoints, fullRead.boundRoots]).toEqual([
      ['/', '/w', '/w/docs'],
      ['/', '/w', '/w/docs'],
    ]);
  });
});

describe('buildBwrapSandbox argv', () => {
  it('never mounts a missing path (no placeholder on the host) and skips masks the sandbox does not show', () => {
    const p = plan({
      readableRoots: ['/usr'],
      writableRoots: [
        { root: '/gone', readOnlySubpaths: [], protectedNames: PROTECTED },
        { root: '/w', readOnlySubpaths: ['/w/ro-missing'], protectedNames: PROTECTED },
      ],
      deniedPaths: ['/srv/secret', '/w/.env'],
      cwd: '/gone',
    });
    const facts = factsFor(p, {
      '/gone': missing,
      '/w/ro-missing': missing,
      '/w/.env': missing,
      '/w/.git': missing,
      '/w/.agents': missing,
      '/w/.codex': missing,
      '/usr/bin/node': file,
      '/opt/fs/helper.cjs': file,
    });
    const args = bwrapArgs(p, facts, runtime);
    for (const absent of ['/gone', '/w/ro-missing', '/w/.env', '/w/.git', '/srv/secret']) {
      expect(args).not.toContain(absent);
    }
    expect(args.slice(args.indexOf('--chdir'), args.indexOf('--chdir') + 2)).toEqual(['--chdir', '/']);
  });

  it('re-binds a runtime file read-only when it lies inside a writable root', () => {
    const p = plan({
      fullDiskRead: true,
      writableRoots: [{ root: '/opt', readOnlySubpaths: [], protectedNames: [] }],
    });
    const facts = factsFor(p, { '/usr/bin/node': file, '/opt/fs/helper.cjs': file });
    const args = bwrapArgs(p, facts, runtime);
    const bind = args.indexOf('--bind');
    const mask = args.indexOf('/opt/fs/helper.cjs');
    expect(args.slice(bind, bind + 3)).toEqual(['--bind', '/opt', '/opt']);
    expect(args.slice(mask - 1, mask + 2)).toEqual(['--ro-bind', '/opt/fs/helper.cjs', '/opt/fs/helper.cjs']);
    expect(mask).toBeGreaterThan(bind);
  });

  it('puts every path in its own argv element, however it is spelled', () => {
    const odd = "/w/it's a dir;$(rm -rf ~)";
    const p = plan({
      fullDiskRead: true,
      writableRoots: [{ root: odd, readOnlySubpaths: [], protectedNames: [] }],
    });
    const facts = factsFor(p, { '/usr/bin/node': file, '/opt/fs/helper.cjs': file });
    const args = bwrapArgs(p, facts, runtime);
    expect(args.slice(args.indexOf('--bind'), args.indexOf('--bind') + 3)).toEqual(['--bind', odd, odd]);
  });
});

describe('buildBwrapSandbox refusals', () => {
  const base = (extra: Partial<SandboxPlan>) =>
    plan({
      fullDiskRead: true,
      writableRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: [] }],
      ...extra,
    });

  function refusal(p: SandboxPlan, known: Record<string, PathFact>, real?: string[]): FsError {
    try {
      bwrapArgs(
        p,
        factsFor(p, { '/usr/bin/node': file, '/opt/fs/helper.cjs': file, ...known }, real),
        runtime,
      );
    } catch (error) {
      expect(error).toBeInstanceOf(FsError);
      return error as FsError;
    }
    throw new Error('expected buildBwrapSandbox to refuse');
  }

  it('refuses a deny path that crosses a symlink inside a writable root', () => {
    const error = refusal(base({ deniedPaths: ['/w/link/secret'] }), {
      '/w/link/secret': { kind: 'file', linkText: null, symlinksCrossed: ['/w/link'] },
    });
    expect(error.kind).toBe('permission_denied');
    expect(error.message).toBe(
      'cannot build the sandbox: /w/link/secret crosses the symlink /w/link inside writable root /w; the helper could re-point it and escape the mask',
    );
  });

  it('refuses a deny path that is itself a symlink inside a writable root', () => {
    const error = refusal(base({ deniedPaths: ['/w/.env'] }), {
      '/w/.env': { kind: 'file', linkText: '/etc/passwd', symlinksCrossed: ['/w/.env'] },
    });
    expect(error.kind).toBe('permission_denied');
  });

  it('refuses a read-only subpath reached through a symlink in a writable root', () => {
    const readOnly = plan({
      fullDiskRead: true,
      writableRoots: [{ root: '/w', readOnlySubpaths: ['/w/docs'], protectedNames: ['.git'] }],
    });
    expect(
      refusal(readOnly, {
        '/w/docs': { kind: 'directory', linkText: '/tmp/x', symlinksCrossed: ['/w/docs'] },
      }).kind,
    ).toBe('permission_denied');
  });

  it('does not mount a surface name that is a symlink (a planted `.codex -> /usr` must not refuse every sandbox)', () => {
    const withLink = plan({
      fullDiskRead: true,
      writableRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: ['.git', '.codex'] }],
    });
    const args = bwrapArgs(
      withLink,
      factsFor(withLink, {
        ...RUNTIME_FILES,
        '/w/.codex': { kind: 'directory', linkText: '/usr', symlinksCrossed: ['/w/.codex'] },
      }),
    );
    expect(args.join(' ')).toContain('--ro-bind /w/.git /w/.git');
    expect(args).not.toContain('/w/.codex');
  });

  it('refuses a nested writable root that is a symlink the outer root can re-point', () => {
    const nested = plan({
      fullDiskRead: true,
      writableRoots: [
        { root: '/w', readOnlySubpaths: [], protectedNames: [] },
        { root: '/w/sub', readOnlySubpaths: [], protectedNames: [] },
      ],
    });
    expect(
      refusal(nested, { '/w/sub': { kind: 'directory', linkText: '/etc', symlinksCrossed: ['/w/sub'] } })
        .kind,
    ).toBe('permission_denied');
  });

  it('uses the real path of a writable root to judge symlinks (a root reached through a link)', () => {
    const error = refusal(
      base({ deniedPaths: ['/w/a/secret'] }),
      { '/w/a/secret': { kind: 'file', linkText: null, symlinksCrossed: ['/data/w/a'] } },
      ['/data/w'],
    );
    expect(error.kind).toBe('permission_denied');
  });

  it.each([
    [
      'the deny spelled through a link, the root by its real path',
      '/r/p',
      '/l/p/secret',
      '/r/p/secret',
      '/r/p',
    ],
    [
      'the root spelled through a link, the deny by its real path',
      '/l/p',
      '/r/p/secret',
      '/r/p/secret',
      '/r/p',
    ],
  ])(
    'masks a denied file under every name the sandbox shows it by: %s',
    (_case, root, deny, denyReal, rootReal) => {
      // Nothing grants the deny by name, so the plan carries it as unshown.
      const p = plan({
        writableRoots: [{ root, readOnlySubpaths: [], protectedNames: [] }],
        unshownDeniedPaths: [deny],
      });
      const crossed = (path: string, real: string): PathFact => ({
        kind: 'file',
        linkText: null,
        symlinksCrossed: path === real ? [] : ['/l'],
        ...(path === real ? {} : { real }),
      });
      const facts = factsFor(
        p,
        {
          '/usr/bin/node': file,
          '/opt/fs/helper.cjs': file,
          [deny]: crossed(deny, denyReal),
          [root]: { ...crossed(root, rootReal), kind: 'directory' },
        },
        [rootReal],
      );
      const args = bwrapArgs(p, facts, runtime).join(' ');
      expect(args).toContain(`--ro-bind /dev/null /${root.split('/')[1]}/p/secret`);
    },
  );

  it.each([
    ['a readable root', { readableRoots: ['/l/p/docs'] }],
    [
      'full-disk read making the entry redundant',
      { fullDiskRead: true, unshownReadOnlyPaths: ['/l/p/docs'] },
    ],
  ])(
    're-binds a read-only entry spelled through a link under the writable root holding it: %s',
    (_case, shape) => {
      const p = plan({
        ...shape,
        writableRoots: [{ root: '/r/p', readOnlySubpaths: [], protectedNames: [] }],
        deniedPaths: ['/r/p/docs/secret'],
      });
      const facts = factsFor(p, {
        '/usr/bin/node': file,
        '/opt/fs/helper.cjs': file,
        '/l/p/docs': { kind: 'directory', linkText: null, symlinksCrossed: ['/l'], real: '/r/p/docs' },
        '/r/p/docs/secret': file,
      });
      const args = bwrapArgs(p, facts, runtime).join(' ');
      const bind = args.indexOf('--bind /r/p /r/p');
      const alias = args.indexOf('--ro-bind /r/p/docs /r/p/docs');
      const mask = args.indexOf('--ro-bind /dev/null /r/p/docs/secret');
      // After the root's bind (else hidden by it), before the deny inside it (else it would unmask it).
      expect(bind).toBeGreaterThan(-1);
      expect(alias).toBeGreaterThan(bind);
      expect(mask).toBeGreaterThan(alias);
    },
  );

  it('does not re-bind a read-only entry whose real name is denied or missing', () => {
    const p = plan({
      fullDiskRead: true,
      unshownReadOnlyPaths: ['/l/p/docs/inner', '/l/p/gone'],
      writableRoots: [{ root: '/r/p', readOnlySubpaths: [], protectedNames: [] }],
      deniedPaths: ['/r/p/docs'],
    });
    const facts = factsFor(p, {
      '/usr/bin/node': file,
      '/opt/fs/helper.cjs': file,
      '/l/p/docs/inner': { ...dir, symlinksCrossed: ['/l'], real: '/r/p/docs/inner' },
      '/l/p/gone': { ...missing, symlinksCrossed: ['/l'] },
    });
    const args = bwrapArgs(p, facts, runtime).join(' ');
    expect(args).toContain('--tmpfs /r/p/docs');
    expect(args).not.toContain('/r/p/docs/inner');
    expect(args).not.toContain('/r/p/gone');
  });

  it('allows masks whose symlinks live outside every writable root', () => {
    const p = base({ deniedPaths: ['/etc/alternatives/secret'] });
    const args = bwrapArgs(
      p,
      factsFor(p, {
        '/usr/bin/node': file,
        '/opt/fs/helper.cjs': file,
        '/etc/alternatives/secret': {
          kind: 'file',
          linkText: '/srv/x',
          symlinksCrossed: ['/etc/alternatives/secret'],
        },
      }),
      runtime,
    );
    expect(args).toContain('/etc/alternatives/secret');
  });

  it('refuses when the helper runtime lies inside a denied path', () => {
    const error = refusal(plan({ fullDiskRead: false, readableRoots: ['/'], deniedPaths: ['/opt'] }), {});
    expect(error.kind).toBe('sandbox_unavailable');
    expect(error.message).toContain('/opt/fs/helper.cjs');
  });

  it.each([
    ['relative', 'w/x'],
    ['dot-dot', '/w/../etc'],
    ['NUL', '/w/a\0b'],
    ['newline', '/w/a\nb'],
    ['trailing slash', '/w/'],
    ['non-UTF-8 escape', '/w/\udcff'],
  ])('refuses a %s path with invalid_params', (_name, path) => {
    const p = plan({
      fullDiskRead: true,
      writableRoots: [{ root: path, readOnlySubpaths: [], protectedNames: [] }],
    });
    expect(refusal(p, {}).kind).toBe('invalid_params');
  });

  it('refuses an environment name that is not a plain identifier', () => {
    const p = plan({ fullDiskRead: true });
    const facts = factsFor(p, { '/usr/bin/node': file, '/opt/fs/helper.cjs': file });
    expect(() => bwrapArgs(p, facts, { ...runtime, env: { 'A=B': 'x' } })).toThrow(FsError);
  });
});

describe('buildBwrapSandbox cwd', () => {
  const facts = (p: SandboxPlan, known: Record<string, PathFact> = {}) =>
    factsFor(p, { '/usr/bin/node': file, '/opt/fs/helper.cjs': file, ...known });
  const chdirOf = (args: string[]) => args[args.indexOf('--chdir') + 1];

  it('uses / when the cwd is not visible in the sandbox', () => {
    const p = plan({ readableRoots: ['/usr'], cwd: '/home/u' });
    expect(chdirOf(bwrapArgs(p, facts(p), runtime))).toBe('/');
  });

  it('uses / when the cwd is denied or is not a directory', () => {
    const denied = plan({
      fullDiskRead: false,
      readableRoots: ['/'],
      deniedPaths: ['/home/u'],
      cwd: '/home/u/p',
    });
    expect(chdirOf(bwrapArgs(denied, facts(denied), runtime))).toBe('/');
    const notDir = plan({ fullDiskRead: true, cwd: '/etc/hostname' });
    expect(chdirOf(bwrapArgs(notDir, facts(notDir, { '/etc/hostname': file }), runtime))).toBe('/');
  });

  it('uses the cwd inside a readable root', () => {
    const p = plan({ readableRoots: ['/srv/project'], cwd: '/srv/project/src' });
    expect(chdirOf(bwrapArgs(p, facts(p), runtime))).toBe('/srv/project/src');
  });
});

describe('bwrapFactPaths', () => {
  it('asks about exactly the mounted paths and the cwd', () => {
    const p = plan({
      readableRoots: ['/usr'],
      writableRoots: [{ root: '/w', readOnlySubpaths: ['/w/docs'], protectedNames: ['.git'] }],
      deniedPaths: ['/w/.env'],
      cwd: '/w',
    });
    expect(new Set(bwrapFactPaths(p, runtime))).toEqual(
      new Set([
        '/usr',
        '/usr/bin/node',
        '/opt/fs/helper.cjs',
        '/opt/fs/rg',
        '/w',
        '/w/docs',
        '/w/.git',
        '/w/.env',
        ...Object.keys(KERNEL_FACTS),
      ]),
    );
    expect(bwrapFactPaths(p, runtime, [], ['/sys/devices/system/cpu/cpu0/thermal_throttle'])).toContain(
      '/sys/devices/system/cpu/cpu0/thermal_throttle',
    );
  });
});

describe("the kernel's procfs and sysfs paths", () => {
  const sysfsArgs = (p: SandboxPlan, known: Record<string, PathFact> = {}, cpu: string[] = []) =>
    bwrapArgs(p, factsFor(p, { ...RUNTIME_FILES, ...known }, undefined, [], cpu));
  const workspace = plan({
    readableRoots: ['/usr'],
    writableRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: [] }],
  });

  it('binds /proc/sys and the other control files read-only and masks the rest, after every policy mount', () => {
    const args = sysfsArgs(workspace).join(' ');
    expect(args).toContain('--ro-bind /proc/sys /proc/sys');
    expect(args).toContain('--ro-bind /proc/sysrq-trigger /proc/sysrq-trigger');
    expect(args).toContain('--perms 0000 --ro-bind-data 5 /proc/kcore');
    expect(args).toContain('--perms 0000 --tmpfs /proc/acpi');
    expect(args).toContain('--remount-ro /proc/acpi');
    expect(args.indexOf('/proc/sys')).toBeGreaterThan(args.indexOf('--bind /w /w'));
  });

  it("numbers the inputs after a command's channel to the broker when the launch has one", () => {
    const plain = buildBwrapSandbox(workspace, factsFor(workspace, RUNTIME_FILES), runtime);
    const channel = { ...workspace, launchChannel: true };
    const shifted = buildBwrapSandbox(channel, factsFor(channel, RUNTIME_FILES), runtime);
    expect([plain.firstInputFd, shifted.firstInputFd]).toEqual([3, 4]);
    expect(plain.args.join(' ')).toContain('--seccomp 3');
    expect(shifted.args.join(' ')).toContain('--seccomp 4');
    expect(shifted.args.join(' ')).toContain('--perms 0000 --ro-bind-data 6 /proc/kcore');
    expect(shifted.emptyInputs).toBe(plain.emptyInputs);
  });

  it('leaves out what this kernel lacks (a mount needs its target)', () => {
    const args = sysfsArgs(workspace, { '/proc/kcore': missing, '/proc/sysrq-trigger': missing });
    expect(args).not.toContain('/proc/kcore');
    expect(args).not.toContain('/proc/sysrq-trigger');
  });

  it('masks /sys paths only where the sandbox shows /sys, and never under a deny', () => {
    expect(sysfsArgs(workspace)).not.toContain('/sys/firmware');
    const granted = plan({ readableRoots: ['/sys', '/usr'] });
    expect(sysfsArgs(granted)).toContain('/sys/firmware');
    const inside = plan({ readableRoots: ['/sys/firmware/dmi', '/usr'] });
    expect(sysfsArgs(inside)).toContain('/sys/firmware');
    const denied = plan({ fullDiskRead: true, deniedPaths: ['/sys'] });
    expect(sysfsArgs(denied)).not.toContain('/sys/firmware');
    const fullRead = plan({ fullDiskRead: true });
    const thermal = '/sys/devices/system/cpu/cpu0/thermal_throttle';
    expect(sysfsArgs(fullRead, {}, [thermal]).join(' ')).toContain(`--perms 0000 --tmpfs ${thermal}`);
  });

  it('is not among the mount points a warm helper checks (the host cannot replace them)', () => {
    const p = plan({ fullDiskRead: true });
    const { mountPoints } = buildBwrapSandbox(p, factsFor(p, RUNTIME_FILES), runtime);
    expect(mountPoints.filter((path) => path.startsWith('/proc') || path.startsWith('/sys'))).toEqual([]);
  });
});
