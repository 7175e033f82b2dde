import type { ResultOf } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';
import { escapeForTerminal } from './terminal-text.js';

/** The wire's fs/getMetadata result. */
export type Metadata = ResultOf<'fs/getMetadata'>;

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Epoch milliseconds as local time `YYYY-MM-DD HH:MM` (the `ls -l` and `stat` form). */
export function localIsoMinute(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** What the path is once a final symlink is followed: `directory`, `file` or `other`. */
export function kindOf(metadata: Metadata): string {
  return metadata.isDirectory ? 'directory' : metadata.isFile ? 'file' : 'other';
}

/** The human form of `stat`: one `field: value` per line; the path is escaped for the terminal. */
export function formatStat(path: string, metadata: Metadata): string {
  const lines = [
    ['path', escapeForTerminal(path)],
    ['kind', kindOf(metadata)],
    ['size', String(metadata.size)],
    ['modified', localIsoMinute(metadata.modifiedAtMs)],
    // A filesystem without birth times reports 0.
    ['created', metadata.createdAtMs === 0 ? 'unknown' : localIsoMinute(metadata.createdAtMs)],
    ['symlink', metadata.isSymlink ? 'yes' : 'no'],
  ];
  return lines.map(([field, value]) => `${`${field}:`.padEnd(10)}${value}\n`).join('');
}

/**
 * `fs-sandbox stat PATH`: kind, size, times (local time) and whether PATH is a symlink. Kind, size
 * and times are those of the symlink's target, as fs/getMetadata reports them.
 */
export function registerStatCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'stat'))
    .description(
      'show kind, size, modified/created time (local) and whether PATH is a symlink (fs/getMetadata; kind, size and times follow a symlink)',
    )
    .argument('<path>', 'native path')
    .action((path: string, flags: ShortcutFlags & { json?: boolean }) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const result = await broker.call('fs/getMetadata', { path: uri(path), sandbox }, { timeoutMs });
        if (flags.json) writeResultJson(deps.io.stdout, result);
        else deps.io.stdout.write(formatStat(path, result));
      }),
    );
}
