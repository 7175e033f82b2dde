import { existsSync, readFileSync, realpathSync } from 'node:fs';
import Module from 'node:module';
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
  // The file of the running code (the CLI's bundle, or the broker package's module): its package is
  // the first root. A test passes a file of another installation.
  runningFile: string = fileURLToPath(import.meta.url),
): string[] {
  const brokerRoot = packageRootOf(runningFile, null);
  const paths = new Set<string>([runtimePath, helperBundle]);
  if (ripgrepPath !== null) paths.add(ripgrepPath);
  if (brokerRoot === null) return [...paths];
  // The same few node_modules folders are asked about for every package (~600 calls unshared).
  const known = new Map<string, string | null>();
  const existing: Existing = (path) => {
    let real = known.get(path);
    if (real === undefined) {
      try {
        real = realpathSync.native(path);
      } catch {
        real = null;
      }
      known.set(path, real);
    }
    return real;
  };
  const roots = [brokerRoot];
  const helperRoot = packageRootOf(helperBundle, '@fs-sandbox/helper');
  if (helperRoot !== null) roots.push(helperRoot);
  // ripgrep's binary lives in a per-platform optional package of @vscode/ripgrep, not a dependency of ours.
  const ripgrepRoot = ripgrepPath === null ? null : packageRootOf(ripgrepPath, null);
  if (ripgrepRoot !== null) roots.push(ripgrepRoot);
  const manifest = readManifest(brokerRoot);
  const dependencies = Object.keys({ ...manifest?.dependencies, ...manifest?.optionalDependencies });
  for (const name of dependencies) {
    const root = installedRoot(brokerRoot, name, existing);
    if (root !== null) roots.push(root);
    // The dependencies' own dependencies (zod under the policy package) are part of the run too, and
    // their optional ones: the Bun helper's package for this platform under the helper package,
    // which a later broker runs (its self-check outside any sandbox) even when this one runs node.
    const inner = root === null ? null : readManifest(root);
    if (root === null || inner === null) continue;
    for (const innerName of Object.keys({ ...inner.dependencies, ...inner.optionalDependencies })) {
      const innerRoot = installedRoot(root, innerName, existing);
      if (innerRoot !== null) roots.push(innerRoot);
    }
  }
  for (const root of roots) {
    paths.add(root);
    for (const folder of moduleFoldersAbove(root, existing)) paths.add(folder);
  }
  return [...paths].sort();
}

/** The real path of a path, or null when there is none: asked once per path per ownCodePaths call. */
type Existing = (path: string) => string | null;

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
    current = realpathSync.native(dirname(file));
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

/**
 * The real path of the folder node loads the package `name` from when it is required from inside
 * `root`: the first `node_modules/<name>` holding a package.json in `root` or a folder above it
 * (node skips those that are themselves named `node_modules`), else in node's global folders
 * (NODE_PATH, ~/.node_modules, ...). Found by looking, not by require.resolve: resolving each
 * package's entry point through its `exports` took ~12 ms of every broker's start, and the folder
 * is all that is protected. Null when it is not installed (an optional dependency of another
 * platform).
 */
function installedRoot(root: string, name: string, existing: Existing): string | null {
  const searched: string[] = [];
  for (let current = root; ; current = dirname(current)) {
    if (basename(current) !== 'node_modules') searched.push(join(current, 'node_modules'));
    if (dirname(current) === current) break;
  }
  for (const folder of [...searched, ...globalModuleFolders()]) {
    if (existing(folder) === null) continue;
    const candidate = join(folder, name);
    if (!existsSync(join(candidate, 'package.json'))) continue;
    try {
      return realpathSync.native(candidate);
    } catch {
      // Gone meanwhile: node would look further too.
    }
  }
  return null;
}

/** Node's global folders, searched after every `node_modules` above (not typed by @types/node). */
function globalModuleFolders(): readonly string[] {
  return (Module as unknown as { globalPaths?: string[] }).globalPaths ?? [];
}

/**
 * Where node looks for a package required from inside `root`: every ancestor folder named
 * `node_modules` and every `node_modules` beside an ancestor (pnpm's `.pnpm/node_modules`, the
 * project's own). A module planted in any of them (ws loads an optional `bufferutil` from there)
 * would run in the broker; the `.bin` shims that start the CLI live there too.
 */
function moduleFoldersAbove(root: string, existing: Existing): string[] {
  const found: string[] = [];
  for (let current = dirname(root); ; current = dirname(current)) {
    if (basename(current) === 'node_modules') found.push(current);
    const beside = existing(join(current, 'node_modules'));
    if (beside !== null) found.push(beside);
    if (dirname(current) === current) return found;
  }
}
