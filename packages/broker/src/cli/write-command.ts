import { LIMITS } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { readBoundedStdinBytes } from './read-stdin.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `--mode` is the file's permission bits (the `permissions` param), not the write mode. */
interface WriteFlags {
  create?: boolean;
  mode?: string;
}

/**
 * `fs-sandbox write PATH [TEXT]`: writes TEXT, or stdin when TEXT is absent, atomically. Stdin is
 * bounded like one JSON-RPC message, since the bytes travel base64-encoded in the params.
 */
export function registerWriteCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'write')
    .description('write a file from TEXT or stdin (fs/writeFile)')
    .argument('<path>', 'native path')
    .argument('[text]', 'content (default: read stdin)')
    .option('--create', 'fail if the file already exists')
    .option('--mode <octal>', 'permission bits, e.g. 0600 (default: new file 0666 under the umask)')
    .action((path: string, text: string | undefined, flags: ShortcutFlags & WriteFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const data =
          text === undefined
            ? await readBoundedStdinBytes(deps.io.stdin, LIMITS.rpcMaxMessageBytes)
            : Buffer.from(text, 'utf8');
        const params = {
          path: uri(path),
          dataBase64: data.toString('base64'),
          sandbox,
          mode: flags.create ? ('create' as const) : ('overwrite' as const),
          ...(flags.mode === undefined ? {} : { permissions: flags.mode }),
        };
        await broker.call('fs/writeFile', params, { timeoutMs });
      }),
    );
}
