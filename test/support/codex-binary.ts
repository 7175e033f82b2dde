import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { REPO } from './build.js';

/** The Rust target each @openai/codex platform package ships its binary under. */
const TRIPLES: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

/**
 * The reference Codex CLI binary of the pinned `@openai/codex` devDependency (it acts as
 * `apply_patch` and serves `exec-server`), or null when npm installed no build for this platform:
 * the tests that compare against it then skip, naming the platform.
 */
export function codexBinary(): string | null {
  const platform = `${process.platform}-${process.arch}`;
  const triple = TRIPLES[platform];
  if (triple === undefined) return null;
  try {
    const codex = createRequire(join(REPO, 'test', 'package.json')).resolve('@openai/codex/package.json');
    const native = createRequire(codex).resolve(`@openai/codex-${platform}/package.json`);
    const binary = join(dirname(native), 'vendor', triple, 'bin', 'codex');
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}
