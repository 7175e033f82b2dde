import { relative, resolve, sep } from 'node:path';
import { currentHostOs, LIMITS, pathUriToNative, type ResultOf } from '@fs-sandbox/policy';
import { type Command, InvalidArgumentError } from 'commander';
import { type CliDeps, EXIT } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

/** The deepest `--max-depth`: the wire's maxDepth counts directories entered below PATH, so it is one less. */
export const WALK_MAX_DEPTH = LIMITS.walkMaxDepth + 1;

type WalkListing = ResultOf<'fs/walk'>;
type EntryKind = WalkListing['entries'][number]['kind'];

/** How a line ends: `/` for a directory, `@` for a link the walk listed without following (as `ls -F`). */
const KIND_MARK: Record<EntryKind, string> = { directory: sep, symlink: '@', file: '' };

function parseDepth(text: string): number {
  const depth = Number(text);
  if (!/^\d+$/.test(text) || depth < 1 || depth > WALK_MAX_DEPTH) {
    throw new InvalidArgumentError(`must be a whole number from 1 to ${WALK_MAX_DEPTH}`);
  }
  return depth;
}

/** A path below the root for people: relative, separated as the host writes it, marked by kind. */
function relativeLine(root: string, uri: string, kind: EntryKind): string {
  return `${relative(root, pathUriToNative(uri, currentHostOs()))}${KIND_MARK[kind]}`;
}

/** Sorted so each directory's contents follow it (the wire's order is breadth-first). */
function byPath(a: string, b: string): number {
  const left = a.split(sep);
  const right = b.split(sep);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const x = left[i] as string;
    const y = right[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return left.length - right.length;
}

/** The human form of a walk: one escaped relative path per line, directories ending in `/`, links in `@`. */
export function formatWalk(root: string, result: WalkListing): string {
  const lines = result.entries.map((entry) => relativeLine(root, entry.path, entry.kind)).sort(byPath);
  return lines.map((line) => `${escapeForTerminal(line)}\n`).join('');
}

/**
 * `fs-sandbox walk [--max-depth N] PATH` (alias `tree`): the tree below PATH through fs/walk, at the
 * wire's largest limits, symlinks not followed, hidden directories entered. Unreadable parts are
 * reported on stderr (exit 1), as is a listing cut short by a limit.
 */
export function registerWalkCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'walk'))
    .alias('tree')
    .description(
      'list the tree below PATH, one relative path per line, directories ending in /, symlinks (never followed) in @ (fs/walk; unreadable entries go to stderr with exit 1)',
    )
    .argument('[path]', 'native path', '.')
    .option(
      '--max-depth <n>',
      `levels below PATH to list, 1 = its own entries (default and most: ${WALK_MAX_DEPTH})`,
      parseDepth,
    )
    .action((path: string, flags: ShortcutFlags & { json?: boolean; maxDepth?: number }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const options = {
          maxDepth: (flags.maxDepth ?? WALK_MAX_DEPTH) - 1,
          maxDirectories: LIMITS.walkMaxDirectories,
          maxEntries: LIMITS.walkMaxEntries,
          followDirectorySymlinks: false,
          pruneHiddenDirectories: false,
          includeSymlinks: true,
        };
        const result = await broker.call('fs/walk', { path: uri(path), options, sandbox }, { timeoutMs });
        if (flags.json) {
          writeResultJson(deps.io.stdout, result);
          return;
        }
        const root = resolve(deps.io.cwd, path);
        deps.io.stdout.write(formatWalk(root, result));
        for (const error of result.errors) {
          const where = pathUriToNative(error.path, currentHostOs());
          deps.io.stderr.write(`${escapeForTerminal(`fs-sandbox: walk: ${where}: ${error.message}`)}\n`);
        }
        if (result.truncated) {
          deps.io.stderr.write(
            'fs-sandbox: walk: the listing was cut short by a limit (entries, directories or size)\n',
          );
        }
        if (result.errors.length > 0) deps.setExitCode(EXIT.failed);
      }),
    );
}
