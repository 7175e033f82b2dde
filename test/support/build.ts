import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The committed launcher the e2e suites run, exactly as users do. */
export const CLI_BIN = join(REPO, 'packages/cli/bin/fs-sandbox.js');

const OUTPUTS = [
  join(REPO, 'packages/cli/dist/cli.cjs'),
  join(REPO, 'packages/helper/dist/helper.cjs'),
  // Built only where a Bun package is installed, into this platform's helper package; where it
  // was, it must be as new as the sources.
  ...[join(REPO, `packages/helper-${process.platform}-${process.arch}/bin/helper-bun`)].filter((path) =>
    existsSync(path),
  ),
];
const SOURCES = ['policy', 'helper', 'broker', 'cli'].map((name) => join(REPO, 'packages', name, 'src'));

/** The newest modification time of any file below `dir`. */
export function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function mtimeOrZero(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * The e2e suites test the built CLI (`pnpm run build` does this in CI). When run on their own,
 * they rebuild the helper bundle and the CLI if either is missing or older than the sources, so a
 * test never passes against stale code.
 */
export function ensureBuilt(): void {
  const sources = Math.max(...SOURCES.map(newestMtime));
  if (OUTPUTS.every((output) => mtimeOrZero(output) >= sources)) return;
  for (const pkg of ['helper', 'broker', 'cli']) {
    execFileSync(process.execPath, ['scripts/build.mjs'], {
      cwd: join(REPO, 'packages', pkg),
      stdio: 'inherit',
    });
  }
}
