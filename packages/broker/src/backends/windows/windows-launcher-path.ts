import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `pnpm run build` puts the launcher, relative to the broker package root. */
const LAUNCHER_IN_PACKAGE = join('dist', 'windows-launcher.js');

/**
 * The built Windows launcher script. It is found from this module's own location by walking up to
 * the broker's package.json, so the answer is the same from source (vitest), from dist, and from
 * the bundled CLI.
 */
export function windowsLauncherScriptPath(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isBrokerManifest(manifest)) return join(dir, LAUNCHER_IN_PACKAGE);
    if (dirname(dir) === dir) {
      throw new Error(`cannot find the @fs-sandbox/broker package above ${from}`);
    }
  }
}

function isBrokerManifest(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name === '@fs-sandbox/broker';
  } catch {
    return false;
  }
}
