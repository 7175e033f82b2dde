import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The broker's own installation: its package, the helper's and the policy's, every package they
 * load at run time, and every `node_modules` folder node searches for them (where the `.bin` shims
 * that start the CLI live too). When an agent's
 * workspace holds fs-sandbox (its project depends on it), all of this lies inside a writable root,
 * and a sandboxed write there would be code the next `fs-sandbox` run executes unsandboxed, with
 * the broker's user and environment. So these paths are re-bound read-only inside every sandbox
 * whose writable roots contain them, and the helper's guard refuses writes there as protected.
 * Real paths (symlinks resolved), computed once per broker.
 */
export function ownCodePaths(
  helperBundle: string,
  runtimePath: string,
  ripgrepPath: string | null = null,
): string[] {
  const brokerRoot = packageRootOf(fileURLToPath(import.meta.url), null);
  const paths = new Set<string>([runtimePath, helperBundle]);
  if (ripgrepPath !== null) paths.add(ripgrepPath);
  if (brokerRoot === null) return [...paths];
  const roots = [brokerRoot];
  const helperRoot = packageRootOf(helperBundle, '@fs-sandbox/helper');
  if (helperRoot !== null) roots.push(helperRoot);
  // ripgrep's binary lives in a per-platform optional package of @vscode/ripgrep, not a dependency of ours.
  const ripgrepRoot = ripgrepPath === null ? null : packageRootOf(ripgrepPath, null);
  if (ripgrepRoot !== null) roots.push(ripgrepRoot);
  const manifest = readManifest(brokerRoot);
  const require = createRequire(join(brokerRoot, 'package.json'));
  const dependencies = Object.keys({ ...manifest?.dependencies, ...manifest?.optionalDependencies });
  for (const name of dependencies) {
    const root = resolvedRoot(require, name);
    if (root !== null) roots.push(root);
    // The dependencies' own dependencies (zod under the policy package) are part of the run too, and
    // their optional ones: the Bun helper's package for this platform under the helper package,
    // which a later broker runs (its self-check outside any sandbox) even when this one runs node.
    const inner = root === null ? null : readManifest(root);
    if (root === null || inner === null) continue;
    const innerRequire = createRequire(join(root, 'package.json'));
    for (const innerName of Object.keys({ ...inner.dependencies, ...inner.optionalDependencies })) {
      const innerRoot = resolvedRoot(innerRequire, innerName);
      if (innerRoot !== null) roots.push(innerRoot);
    }
  }
  for (const root of roots) {
    paths.add(root);
    for (const folder of moduleFoldersAbove(root)) paths.add(folder);
  }
  return [...paths].sort();
}

interface Manifest {
  name?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function readManifest(root: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/** The real path of the nearest folder above `file` holding a package.json (named `name`, when given). */
function packageRootOf(file: string, name: string | null): string | null {
  let current: string;
  try {
    current = realpathSync(dirname(file));
  } catch {
    return null;
  }
  for (;;) {
    const manifest = existsSync(join(current, 'package.json')) ? readManifest(current) : null;
    if (manifest !== null && (name === null || manifest.name === name)) return current;
    const parent = dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

function resolvedRoot(require: NodeJS.Require, name: string): string | null {
  // Its entry point, else its manifest: a package of files only (the Bun helper's) has no entry.
  for (const specifier of [name, `${name}/package.json`]) {
    try {
      return packageRootOf(require.resolve(specifier), name);
    } catch {
      // Not installed on this platform (an optional dependency), or exports neither.
    }
  }
  return null;
}

/**
 * Where node looks for a package required from inside `root`: every ancestor folder named
 * `node_modules` and every `node_modules` beside an ancestor (pnpm's `.pnpm/node_modules`, the
 * project's own). A module planted in any of them (ws loads an optional `bufferutil` from there)
 * would run in the broker; the `.bin` shims that start the CLI live there too.
 */
function moduleFoldersAbove(root: string): string[] {
  const found: string[] = [];
  for (let current = dirname(root); ; current = dirname(current)) {
    if (basename(current) === 'node_modules') found.push(current);
    const beside = join(current, 'node_modules');
    if (existsSync(beside)) found.push(realpathSync(beside));
    if (dirname(current) === current) return found;
  }
}
