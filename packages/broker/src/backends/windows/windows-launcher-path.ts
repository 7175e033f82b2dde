import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `pnpm run build` puts the launcher, relative to the root of a package that ships it. */
const LAUNCHER_IN_PACKAGE = join('dist', 'windows-launcher.js');

/**
 * The packages that ship the launcher: the library, and the CLI, which bundles this module (so
 * from its dist the nearest such manifest is its own).
 */
const SHIPPED_BY = new Set(['@fs-sandbox/broker', '@fs-sandbox/cli']);

/**
 * The built Windows launcher script. It is found from this module's own location by walking up to
 * the package.json of the package it runs from, so the answer is the same from source (vitest),
 * from the library's dist, and from the bundled CLI.
 */
export function windowsLauncherScriptPath(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && shipsLauncher(manifest)) return join(dir, LAUNCHER_IN_PACKAGE);
    if (dirname(dir) === dir) {
      throw new Error(`cannot find the @fs-sandbox/broker or @fs-sandbox/cli package above ${from}`);
    }
  }
}

function shipsLauncher(path: string): boolean {
  try {
    const { name } = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown };
    return typeof name === 'string' && SHIPPED_BY.has(name);
  } catch {
    return false;
  }
}
