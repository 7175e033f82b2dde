import type { RuntimeKind } from './backend.js';

/**
 * Bun, unasked, reads configuration and code from the working directory (the sandbox cwd, an
 * agent's workspace) and its ancestors: `bunfig.toml` (whose `preload` runs code before the
 * program), `.env` files (into process.env), `tsconfig.json` (whose `paths` can redirect a
 * `require` to a workspace file), and it may install a missing import. Each flag turns one off:
 * the config and the tsconfig are replaced by the empty /dev/null (present in every sandbox),
 * `.env` autoloading and auto-install are disabled, and native addons are refused. node reads
 * nothing of the kind, so it starts with its defaults.
 */
const BUN_HARDENING_FLAGS = [
  '--config=/dev/null',
  '--tsconfig-override=/dev/null',
  '--no-env-file',
  '--no-install',
  '--no-addons',
] as const;

/** The runtime's own flags for every helper it starts, before any backend- or spare-specific ones. */
export function runtimeFlags(kind: RuntimeKind): string[] {
  return kind === 'bun' ? [...BUN_HARDENING_FLAGS] : [];
}
