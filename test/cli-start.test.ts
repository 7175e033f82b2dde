import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, REPO } from './support/build.js';

/**
 * How the `fs-sandbox` program starts (packages/cli/bin/load.cjs): `--version` without the program,
 * everything else from the bundle and the V8 code cache the build made for it. The start's time is
 * the bench's (bench/lib/cli-start.mjs); these check that the fast path says what the program says
 * and that the cache is one this node uses.
 */

const CLI = join(REPO, 'packages/cli');
const run = (args: string[]) => execFileSync(process.execPath, [CLI_BIN, ...args], { encoding: 'utf8' });

beforeAll(() => {
  ensureBuilt();
});

describe('the CLI start', () => {
  it('answers --version from the manifest, as the program does', () => {
    const { version } = JSON.parse(readFileSync(join(CLI, 'package.json'), 'utf8')) as { version: string };
    expect(run(['--version'])).toBe(`${version}\n`);
    expect(run(['-V'])).toBe(`${version}\n`);
    // The program's own answer, for a form the fast path leaves to it.
    expect(run(['--version', '--help'])).toBe(`${version}\n`);
  });

  it('lists every verb in help, each loaded on demand', () => {
    const help = run(['--help']);
    for (const verb of ['call', 'cat', 'run', 'serve', 'app-server', 'mcp', 'doctor', 'explain', 'why']) {
      expect(help).toMatch(new RegExp(`^  ${verb} `, 'm'));
    }
    expect(run(['cat', '--help'])).toMatch(/^Usage: fs-sandbox cat \[options\] <path>/);
  });

  it("ships both code caches for this node's V8, each one V8 accepts for the bundle", () => {
    const program = join(CLI, 'dist/cli.cjs');
    const { codeCachePath, cacheKind, CACHE_KINDS } = createRequire(import.meta.url)(
      join(CLI, 'bin/load.cjs'),
    ) as {
      codeCachePath(v8Version: string, kind: string): string;
      cacheKind(argv: string[]): string;
      CACHE_KINDS: string[];
    };
    expect(cacheKind(['cat', '--no-sandbox', 'a.txt'])).toBe('in-process');
    expect(cacheKind(['cat', 'a.txt'])).toBe('sandboxed');
    expect(CACHE_KINDS.sort()).toEqual(['in-process', 'sandboxed']);
    for (const kind of CACHE_KINDS) {
      const cachedData = readFileSync(codeCachePath(process.versions.v8, kind));
      const script = new Script(wrap(readFileSync(program, 'utf8')), { filename: program, cachedData });
      expect(script.cachedDataRejected, kind).toBe(false);
    }
  });
});
