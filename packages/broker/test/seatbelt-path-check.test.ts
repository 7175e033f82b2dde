import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPlan } from '@fs-sandbox/policy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import { resolveMacosTopLevelAlias } from '../src/backends/macos/macos-path-aliases.js';
import { reconcileSeatbeltPaths } from '../src/backends/macos/seatbelt-path-check.js';
import { emptyPlan } from './support/plans.js';

// The checks run against the real disk with real symlinks; only the /private alias rewrite is
// macOS-specific, so these tests compare against the spelled path itself.
const deps = { realpath: (path: string) => realpath(path), profileSpelling: (path: string) => path };

let base: string;
let runtime: HelperRuntime;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'seatbelt-check-')));
  await mkdir(join(base, 'real', 'sub'), { recursive: true });
  await mkdir(join(base, 'elsewhere'), { recursive: true });
  await symlink(join(base, 'real'), join(base, 'link'));
  runtime = {
    executable: { kind: 'node', path: process.execPath },
    helperBundle: join(base, 'real', 'helper.cjs'),
    ripgrepPath: null,
    env: {},
  };
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function plan(overrides: Partial<SandboxPlan>): SandboxPlan {
  return emptyPlan('macos', { fullDiskRead: true, ...overrides });
}

const writable = (root: string, readOnlySubpaths: string[] = [], protectedNames: string[] = []) => ({
  root,
  readOnlySubpaths,
  protectedNames,
});

// POSIX paths against the real disk: Windows temp paths are not macOS paths.
describe.skipIf(process.platform === 'win32')(
  `Seatbelt path reconciliation (skipped on Windows: needs POSIX paths, this is ${process.platform})`,
  () => {
    it('accepts writable roots that are their own real path, existing or not', async () => {
      const p = plan({
        writableRoots: [writable(join(base, 'real')), writable(join(base, 'real', 'new', 'dir'))],
      });
      const out = await reconcileSeatbeltPaths(p, runtime, deps);
      expect(out.plan.writableRoots).toEqual(p.writableRoots);
    });

    it('refuses a writable root that is a symlink', async () => {
      const p = plan({ writableRoots: [writable(join(base, 'link'))] });
      await expect(reconcileSeatbeltPaths(p, runtime, deps)).rejects.toMatchObject({
        kind: 'sandbox_unavailable',
        message: expect.stringContaining(`resolves through a symlink to ${join(base, 'real')}`),
      });
    });

    it('refuses a writable root with a symlink component deeper in its path', async () => {
      const p = plan({ writableRoots: [writable(join(base, 'link', 'sub'))] });
      await expect(reconcileSeatbeltPaths(p, runtime, deps)).rejects.toMatchObject({
        kind: 'sandbox_unavailable',
      });
    });

    it('refuses a read-only subpath or denied path that crosses a symlink inside a writable root', async () => {
      const root = join(base, 'real');
      await symlink(join(base, 'elsewhere'), join(root, 'hop'));
      for (const p of [
        plan({ writableRoots: [writable(root, [join(root, 'hop', 'ro')])] }),
        plan({ writableRoots: [writable(root)], deniedPaths: [join(root, 'hop', 'secret')] }),
      ]) {
        await expect(reconcileSeatbeltPaths(p, runtime, deps)).rejects.toMatchObject({
          kind: 'sandbox_unavailable',
          message: expect.stringContaining('could re-point that link'),
        });
      }
    });

    it('builds beside a symlink planted on a surface name (the guard refuses writes there by name)', async () => {
      const root = join(base, 'real');
      await symlink(join(base, 'elsewhere'), join(root, '.git'));
      const p = plan({ writableRoots: [writable(root, [], ['.git'])] });
      await expect(reconcileSeatbeltPaths(p, runtime, deps)).resolves.toBeDefined();
    });

    it('adds the resolved form of readable roots and outside denied paths that cross a symlink', async () => {
      const p = plan({
        fullDiskRead: false,
        readableRoots: [join(base, 'link'), join(base, 'elsewhere')],
        deniedPaths: [join(base, 'link', 'sub')],
      });
      const out = await reconcileSeatbeltPaths(p, runtime, deps);
      expect(out.plan.readableRoots).toEqual([
        join(base, 'link'),
        join(base, 'elsewhere'),
        join(base, 'real'),
      ]);
      expect(out.plan.deniedPaths).toEqual([join(base, 'link', 'sub'), join(base, 'real', 'sub')]);
    });

    it('resolves the runtime files to their real paths', async () => {
      const out = await reconcileSeatbeltPaths(
        plan({}),
        { ...runtime, helperBundle: join(base, 'link', 'helper.cjs') },
        deps,
      );
      expect(out.runtime.helperBundle).toBe(join(base, 'real', 'helper.cjs'));
    });

    it('compares against the /private spelling by default, as macOS resolves /tmp', async () => {
      const macosLike = { realpath: async (path: string) => path.replace(/^\/tmp(?=\/|$)/, '/private/tmp') };
      const p = plan({ writableRoots: [writable('/tmp/work')] });
      await expect(
        reconcileSeatbeltPaths(p, runtime, { ...macosLike, profileSpelling: (x) => x }),
      ).rejects.toThrow(/resolves through a symlink/);
      const ok = await reconcileSeatbeltPaths(p, runtime, {
        ...macosLike,
        profileSpelling: resolveMacosTopLevelAlias,
      });
      expect(ok.plan.writableRoots[0]?.root).toBe('/tmp/work');
    });
  },
);
