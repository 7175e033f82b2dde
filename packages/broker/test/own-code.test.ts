import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ownCodePaths } from '../src/runner/own-code.js';

const BROKER = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const HELPER_BUNDLE = join(BROKER, '..', 'helper', 'dist', 'helper.cjs');

/** The folder of a package as node's own resolution finds it: the manifest above its entry point. */
function resolvedRoot(from: string, name: string): string | null {
  const require = createRequire(join(from, 'package.json'));
  for (const specifier of [name, `${name}/package.json`]) {
    try {
      let folder = dirname(realpathSync(require.resolve(specifier)));
      for (;;) {
        try {
          const manifest = createRequire(join(folder, 'x'))('./package.json') as { name?: string };
          if (manifest.name === name) return folder;
        } catch {
          // No manifest here.
        }
        folder = dirname(folder);
      }
    } catch {
      // Not installed, or exports neither.
    }
  }
  return null;
}

describe("the broker's own code (own-code.ts)", () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  it('holds every package node resolves for the broker and its dependencies, in this checkout', () => {
    const paths = ownCodePaths(HELPER_BUNDLE, process.execPath);
    const manifest = createRequire(join(BROKER, 'x'))('./package.json') as {
      dependencies: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const expected: string[] = [realpathSync(BROKER)];
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const root = resolvedRoot(BROKER, name);
      if (root === null) continue;
      expected.push(root);
      const inner = createRequire(join(root, 'x'))('./package.json') as {
        dependencies?: Record<string, string>;
        optionalDependencies?: Record<string, string>;
      };
      for (const innerName of Object.keys({ ...inner.dependencies, ...inner.optionalDependencies })) {
        const innerRoot = resolvedRoot(root, innerName);
        if (innerRoot !== null) expected.push(innerRoot);
      }
    }
    // The policy package's zod and the helper's package for this platform among them.
    expect(expected.some((root) => root.includes('zod'))).toBe(true);
    expect(expected.some((root) => root.endsWith(`helper-${process.platform}-${process.arch}`))).toBe(true);
    for (const root of expected) expect(paths).toContain(root);
  });

  it('finds packages where npm installs them: hoisted, nested, beside the project', () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'fs-sandbox-own-code-')));
    made.push(base);
    const modules = join(base, 'project', 'node_modules');
    const pkg = (folder: string, manifest: object) => {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'package.json'), JSON.stringify(manifest));
    };
    const broker = join(modules, '@fs-sandbox', 'broker');
    pkg(broker, {
      name: '@fs-sandbox/broker',
      dependencies: { '@fs-sandbox/policy': '1', ws: '1' },
      optionalDependencies: { 'fs-sandbox-not-installed': '1' },
    });
    mkdirSync(join(broker, 'dist'));
    const running = join(broker, 'dist', 'index.js');
    writeFileSync(running, '');
    // Hoisted beside the broker; its own zod nested under it, which wins over a hoisted one.
    const policy = join(modules, '@fs-sandbox', 'policy');
    pkg(policy, { name: '@fs-sandbox/policy', dependencies: { zod: '4' } });
    pkg(join(policy, 'node_modules', 'zod'), { name: 'zod' });
    pkg(join(modules, 'zod'), { name: 'zod' });
    // ws linked from elsewhere (pnpm's store): its real path is protected.
    pkg(join(base, 'store', 'ws'), { name: 'ws' });
    symlinkSync(join(base, 'store', 'ws'), join(modules, 'ws'));
    // An optional dependency that is not installed: nothing for it.
    const paths = ownCodePaths(HELPER_BUNDLE, process.execPath, null, running);
    expect(paths).toEqual(
      expect.arrayContaining([
        broker,
        policy,
        join(policy, 'node_modules', 'zod'),
        join(base, 'store', 'ws'),
      ]),
    );
    expect(paths).not.toContain(join(modules, 'zod'));
    expect(paths.filter((path) => path.includes('fs-sandbox-not-installed'))).toEqual([]);
    // Where node looks for the modules the broker loads: every node_modules above the packages.
    expect(paths).toEqual(expect.arrayContaining([modules, join(policy, 'node_modules')]));
  });
});
